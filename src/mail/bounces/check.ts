/**
 * `postline bounces check DIR` without the CLI around it: reads each `.eml` file with the
 * reader the live intake uses (./read.ts) and reports what it made of it. No database.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { readReturnedMail, type ReturnedMailKind } from './read.js';
import type { BounceReason } from './reasons.js';

export interface CheckedFile {
  file: string;
  kind: ReturnedMailKind;
  recipients: { email: string; status: string | null; reason: BounceReason; dead: boolean }[];
  /** Only when the file could not be read (permissions, a directory named *.eml). */
  error?: string;
}

export interface CheckSummary {
  files: number;
  kinds: Record<ReturnedMailKind, number>;
  /** Failed recipients found in bounces. */
  recipients: number;
  dead: number;
  /** Bounces in which no failed recipient could be read. */
  bouncesWithoutRecipient: number;
  /** Recipients per reason. */
  reasons: Partial<Record<BounceReason, number>>;
}

/** The `.eml` files under `dir` (sub-folders too), sorted by path. */
export async function listEmlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.eml'))
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

export async function checkFile(dir: string, file: string): Promise<CheckedFile> {
  let raw: Buffer;
  try {
    raw = await readFile(join(dir, file));
  } catch (err) {
    return { file, kind: 'unknown', recipients: [], error: (err as Error).message };
  }
  const read = await readReturnedMail(raw);
  return {
    file,
    kind: read.kind,
    recipients: read.kind === 'bounce' ? read.recipients.map((r) => ({ email: r.email, status: r.status, reason: r.reason, dead: r.dead })) : [],
  };
}

export function summarise(results: CheckedFile[]): CheckSummary {
  const s: CheckSummary = {
    files: results.length, kinds: { bounce: 0, complaint: 0, delivered: 0, auto_reply: 0, unknown: 0 }, recipients: 0, dead: 0, bouncesWithoutRecipient: 0, reasons: {},
  };
  for (const r of results) {
    s.kinds[r.kind]++;
    if (r.kind === 'bounce' && r.recipients.length === 0) s.bouncesWithoutRecipient++;
    for (const x of r.recipients) {
      s.recipients++;
      if (x.dead) s.dead++;
      s.reasons[x.reason] = (s.reasons[x.reason] ?? 0) + 1;
    }
  }
  return s;
}
