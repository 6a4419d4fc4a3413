import { type Page } from '../../db/pagination.js';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Pool, Queryable } from '../../db/pool.js';
import { notifySoon } from '../../db/notify.js';
import { afterCommit, withTransaction } from '../../db/pool.js';
import { queueBuiltInEvents, queueSubscriberCreated } from '../../db/queries/automations/pending.js';
import { insertConfirmations } from '../../db/queries/confirmations.js';
import {
  advanceImport, claimImport, finishImport, insertImport, releaseFailedImport, selectImport, selectImportPage, selectImportPayload,
  type ImportRow, type ImportRowError,
} from '../../db/queries/imports.js';
import { insertMemberships, selectSubscribersByKeys, upsertSubscribers, type UpsertInput } from '../../db/queries/subscribers.js';
import { exitRunsOfAddresses } from '../automations/trigger.js';
import { AppError, invalid, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { requireLists } from './lists.js';
import { findTextProblems } from '../text.js';
import { checkSubscriberFields, type SubscriberStatus } from './subscribers.js';

/**
 * Subscriber imports (CSV or a JSON array, up to 100,000 rows, into one list) as background
 * jobs. The request parses and counts the rows and stores them with the job; a worker claims
 * the job (FOR UPDATE SKIP LOCKED + lease, db/queries/imports.ts) and processes it in batches,
 * each committing its subscribers together with the advanced checkpoint and counters, so a
 * crash resumes at the next batch and nothing is counted twice. docs/decisions/0007 says why
 * this is a job row and not a graphile-worker job.
 *
 * Rows: `email` (required), `name`, `status` (active, unconfirmed, unsubscribed), and any other
 * column / key becomes an attribute (CSV values stay strings; empty cells are left out). A
 * row with a problem is skipped and reported by its 1-based row number (the CSV header is
 * not a row). An address already present is updated, like POST /api/v1/subscribers.
 */

export const IMPORT_MAX_ROWS = 100_000;
export const IMPORT_BATCH_SIZE = 1000;
const LEASE_MS = 60_000;
const MAX_ATTEMPTS = 3;
const RETRY_DELAY_MS = 10_000;

export type ImportStatus = ImportRow['status'];

export interface SubscriberImport {
  id: string;
  listId: string | null;
  status: ImportStatus;
  total: number;
  processed: number;
  created: number;
  updated: number;
  skipped: number;
  errorCount: number;
  /** Row errors, the first 1,000. */
  errors: ImportRowError[];
  failure: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export type ImportSource = { format: 'csv'; text: string } | { format: 'json'; rows: unknown };

type RawRow = Record<string, unknown>;

export function toImport(r: ImportRow): SubscriberImport {
  return {
    id: r.id,
    listId: r.list_id,
    status: r.status,
    total: r.total,
    processed: r.checkpoint,
    created: r.created,
    updated: r.updated,
    skipped: r.skipped,
    errorCount: r.error_count,
    errors: r.errors,
    failure: r.failure,
    createdAt: r.created_at.toISOString(),
    startedAt: r.started_at?.toISOString() ?? null,
    finishedAt: r.finished_at?.toISOString() ?? null,
  };
}

function checkCount(n: number): void {
  if (n === 0) throw invalid('rows', 'the import holds no rows');
  if (n > IMPORT_MAX_ROWS) throw new AppError('validation_failed', `an import holds at most ${IMPORT_MAX_ROWS} rows, this one has ${n}`, { errors: [{ field: 'rows', message: `must be at most ${IMPORT_MAX_ROWS} rows, got ${n}` }] });
}

/** A CSV header cell → the row key: lower-cased, `attributes.` prefix removed from attribute columns. */
function columnKey(header: string): string {
  const h = header.trim();
  const lower = h.toLowerCase();
  if (lower === 'email' || lower === 'e-mail' || lower === 'email address') return 'email';
  if (lower === 'name' || lower === 'status') return lower;
  return h.startsWith('attributes.') ? h.slice('attributes.'.length) : h;
}

/** Structure checks done before anything is stored: format, header, row count. */
async function parseImportSource(source: ImportSource): Promise<RawRow[]> {
  if (source.format === 'json') {
    if (!Array.isArray(source.rows)) throw invalid('subscribers', 'must be an array of objects');
    checkCount(source.rows.length);
    return source.rows as RawRow[];
  }
  // Loaded here: the worker, which runs imports from their stored rows, never parses CSV.
  const { parse: parseCsv } = await import('csv-parse/sync');
  let records: Record<string, string>[];
  try {
    records = parseCsv(source.text, { columns: (h: string[]) => h.map(columnKey), bom: true, skip_empty_lines: true, trim: true, relax_column_count: true });
  } catch (err) {
    throw invalid('csv', `is not valid CSV: ${(err as Error).message}`);
  }
  if (records.length > 0 && !('email' in records[0])) throw invalid('csv', 'the header row must have an "email" column');
  checkCount(records.length);
  return records.map((r) => {
    const row: RawRow = {};
    for (const [k, v] of Object.entries(r)) if (v !== '' && v !== undefined) row[k] = v;
    return row;
  });
}

/** Validates the list and stores the job; a worker (or the CLI) runs it. */
export async function createImport(db: Queryable, accountId: string, input: { listId: string; source: ImportSource }, now: Date = new Date()): Promise<SubscriberImport> {
  await requireLists(db, accountId, [input.listId], 'list');
  const rows = await parseImportSource(input.source);
  const row = await insertImport(db, { id: newId('imp'), accountId, listId: input.listId, total: rows.length, payload: JSON.stringify(rows), now });
  return toImport(row);
}

export async function getImport(db: Queryable, accountId: string, id: string): Promise<SubscriberImport> {
  const row = await selectImport(db, accountId, id);
  if (!row) throw notFound(`import ${id}`);
  return toImport(row);
}

export async function listImports(db: Queryable, accountId: string, page: Page): Promise<SubscriberImport[]> {
  return (await selectImportPage(db, accountId, page)).map(toImport);
}

const KNOWN = new Set(['email', 'name', 'status', 'attributes']);

/** One raw row → an upsert input, or the reason it is skipped. */
function prepareRow(raw: unknown): { input: UpsertInput } | { error: string; email?: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { error: 'must be an object' };
  const r = raw as RawRow;
  // The request's input rule leaves rows to this check, so a bad row is skipped, not the file.
  const text = findTextProblems(r);
  if (text.length > 0) return { error: text.map((e) => `${e.field}: ${e.message}`).join('; ') };
  const email = typeof r.email === 'string' ? r.email : undefined;
  if (r.email === undefined || r.email === null || r.email === '') return { error: 'email is required' };
  const extra = Object.fromEntries(Object.entries(r).filter(([k]) => !KNOWN.has(k)));
  const attributes = r.attributes === undefined ? extra : typeof r.attributes === 'object' && r.attributes !== null && !Array.isArray(r.attributes) ? { ...extra, ...r.attributes } : r.attributes;
  const status = typeof r.status === 'string' ? r.status.toLowerCase() : r.status;
  const { errors, email: parsed } = checkSubscriberFields({ email: r.email, name: r.name, status, attributes });
  if (errors.length > 0) return { error: errors.map((e) => `${e.field}: ${e.message}`).join('; '), email };
  const name = typeof r.name === 'string' && r.name.trim() !== '' ? r.name.trim() : null;
  return {
    input: {
      id: newId('sub'),
      email: parsed!.email,
      emailKey: parsed!.emailKey,
      name,
      nameSet: name !== null,
      status: (status as SubscriberStatus | undefined) ?? null,
      attributes: Object.keys(attributes as object).length > 0 ? (attributes as Record<string, unknown>) : null,
    },
  };
}

interface BatchResult {
  created: number;
  updated: number;
  skipped: number;
  errors: ImportRowError[];
}

/**
 * One batch: validate, upsert (an address repeated within the batch goes in a later round, as
 * the file's later row), add to the list, queue double opt-in confirmations.
 */
async function importBatch(db: Queryable, job: { accountId: string; listId: string | null; doubleOptIn: boolean }, rows: unknown[], firstRow: number, now: Date): Promise<BatchResult> {
  const result: BatchResult = { created: 0, updated: 0, skipped: 0, errors: [] };
  const rounds: UpsertInput[][] = [];
  const seen = new Map<string, number>();
  rows.forEach((raw, i) => {
    const prepared = prepareRow(raw);
    if ('error' in prepared) {
      result.skipped++;
      result.errors.push({ row: firstRow + i + 1, ...(prepared.email ? { email: prepared.email } : {}), message: prepared.error });
      return;
    }
    const round = seen.get(prepared.input.emailKey) ?? 0;
    seen.set(prepared.input.emailKey, round + 1);
    (rounds[round] ??= []).push(prepared.input);
  });
  // Rows that unsubscribe: which of those addresses are subscribed now (before the batch).
  const unsubscribing = [...new Set(rounds.flat().filter((r) => r.status === 'unsubscribed').map((r) => r.emailKey))];
  const before = await selectSubscribersByKeys(db, unsubscribing.map((emailKey) => ({ accountId: job.accountId, emailKey })));
  const ids: string[] = [];
  const created: string[] = [];
  for (const round of rounds) {
    const done = await upsertSubscribers(db, job.accountId, round, { newStatus: job.doubleOptIn ? 'unconfirmed' : 'active', now });
    for (const d of done) {
      if (d.inserted) {
        result.created++;
        created.push(d.id);
      } else {
        result.updated++;
      }
      ids.push(d.id);
    }
  }
  if (job.listId) {
    const unique = [...new Set(ids)];
    await insertMemberships(db, job.accountId, unique, [job.listId], now);
    if (job.doubleOptIn) await insertConfirmations(db, job.accountId, unique, [job.listId], now);
  }
  // New subscribers fire subscriber.created as a single create does, queued with the batch
  // (one statement) and started by the worker: the import does not wait on the runs.
  let queued = await queueSubscriberCreated(db, job.accountId, created, now);
  // Existing subscribers the batch unsubscribed: as a PATCH to unsubscribed does, their runs
  // exit now (in this transaction) and subscriber.unsubscribed fires (queued likewise).
  if (unsubscribing.length > 0) {
    const after = await selectSubscribersByKeys(db, unsubscribing.map((emailKey) => ({ accountId: job.accountId, emailKey })));
    const left = [...before.values()].filter((b) => b.status !== 'unsubscribed' && after.get(`${job.accountId} ${b.email_key}`)?.status === 'unsubscribed');
    await exitRunsOfAddresses(db, job.accountId, left.map((b) => b.email_key), 'unsubscribe', now);
    queued += await queueBuiltInEvents(db, job.accountId, 'subscriber.unsubscribed', left.map((b) => ({ email: b.email, data: { subscriberId: b.id, reason: 'import' } })), now);
  }
  if (queued > 0) afterCommit(db, (pool) => notifySoon(pool, 'postline_automations'));
  return result;
}

export interface RunOptions {
  workerId?: string;
  batchSize?: number;
  /** Stop after this many batches, leaving the job leased (tests: a worker that dies). */
  maxBatches?: number;
  onProgress?: (progress: SubscriberImport) => void;
  now?: () => Date;
}

/**
 * Processes a claimed job from its checkpoint. `exec` runs each batch: in a transaction of its
 * own (workers), or directly on a caller's transaction (test-key simulation).
 */
async function processClaimed(db: Queryable, exec: <T>(fn: (c: Queryable) => Promise<T>) => Promise<T>, claimed: ImportRow, workerId: string, o: RunOptions): Promise<'completed' | 'paused'> {
  const clock = o.now ?? (() => new Date());
  const size = o.batchSize ?? IMPORT_BATCH_SIZE;
  const rows = JSON.parse((await selectImportPayload(db, claimed.id)) ?? '[]') as unknown[];
  const lists = claimed.list_id ? await requireLists(db, claimed.account_id, [claimed.list_id], 'list').catch(() => null) : null;
  const job = { accountId: claimed.account_id, listId: lists ? claimed.list_id : null, doubleOptIn: lists?.doubleOptIn.size === 1 };
  let batches = 0;
  for (let at = claimed.checkpoint; at < rows.length; at += size) {
    if (o.maxBatches !== undefined && batches >= o.maxBatches) return 'paused';
    const batch = rows.slice(at, at + size);
    await exec(async (c) => {
      const now = clock();
      const r = await importBatch(c, job, batch, at, now);
      const leaseUntil = new Date(now.getTime() + LEASE_MS);
      if (!(await advanceImport(c, claimed.id, workerId, { checkpoint: at + batch.length, ...r, leaseUntil }))) {
        throw new Error(`import ${claimed.id}: lease lost to another worker`);
      }
    });
    batches++;
    if (o.onProgress) {
      const progress = await selectImport(db, claimed.account_id, claimed.id);
      if (progress) o.onProgress(toImport(progress));
    }
  }
  await exec((c) => finishImport(c, claimed.id, workerId, clock()));
  return 'completed';
}

export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/**
 * Claims one import (the given one, or the oldest due) and runs it to the end. Returns the
 * import's state afterwards, or null when there was nothing to claim. An unexpected error
 * leaves the job to be retried from its checkpoint, and fails it after MAX_ATTEMPTS claims.
 */
export async function runImport(pool: Pool, o: RunOptions & { id?: string } = {}): Promise<SubscriberImport | null> {
  const workerId = o.workerId ?? newWorkerId();
  const now = (o.now ?? (() => new Date()))();
  const claimed = await claimImport(pool, { workerId, now, leaseUntil: new Date(now.getTime() + LEASE_MS), id: o.id });
  if (!claimed) return null;
  try {
    await processClaimed(pool, (fn) => withTransaction(pool, fn), claimed, workerId, o);
  } catch (err) {
    const at = new Date();
    await releaseFailedImport(pool, claimed.id, workerId, {
      message: (err as Error).message, final: claimed.attempts >= MAX_ATTEMPTS, retryAt: new Date(at.getTime() + RETRY_DELAY_MS), now: at,
    });
    throw err;
  }
  return toImport((await selectImport(pool, claimed.account_id, claimed.id))!);
}

/** The worker's step: run due imports one after another until none is left. */
export async function runPendingImports(pool: Pool, o: RunOptions = {}): Promise<number> {
  let done = 0;
  while (await runImport(pool, o)) done++;
  return done;
}

/**
 * Test keys: the whole import on the caller's transaction (which the caller rolls back), so
 * the answer shows exactly what a live import would do and nothing stays.
 */
export async function simulateImport(db: Queryable, accountId: string, input: { listId: string; source: ImportSource }, now: Date = new Date()): Promise<SubscriberImport> {
  const created = await createImport(db, accountId, input, now);
  const workerId = 'sandbox';
  const claimed = await claimImport(db, { workerId, now, leaseUntil: new Date(now.getTime() + LEASE_MS), id: created.id });
  if (!claimed) throw new Error('sandbox import could not be claimed');
  await processClaimed(db, (fn) => fn(db), claimed, workerId, { now: () => now });
  return getImport(db, accountId, created.id);
}
