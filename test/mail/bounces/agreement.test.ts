import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MTA_FAMILIES } from '../../../src/mail/bounces/dialect.js';
import { readReturnedMail, type ReturnedMailKind } from '../../../src/mail/bounces/read.js';
import { BOUNCE_REASONS, sideOf, type BounceReason } from '../../../src/mail/bounces/reasons.js';

/**
 * Every fixture in test/fixtures/bounces against its expected reading (expected.json: per file
 * the MTA family, the kind, and per failed recipient {email, status, reason, dead}). The
 * fixtures are the spec: agreement must be 100 %. Prints agreement per reason and the number
 * of fixtures per family, the figures docs/bounces.md quotes.
 */
interface Expected {
  family: string | null;
  kind: ReturnedMailKind;
  recipients: { email: string; status: string | null; reason: BounceReason; dead: boolean }[];
}

/** The MTA families the reader supports with at least three samples each. */
const FAMILIES = ['postfix', 'exim', 'sendmail', 'qmail', 'exchange', 'gmail', 'yahoo', 'opensmtpd', 'courier', 'amazonses', 'dragonfly', 'jp-carrier'];
const MIN_PER_GROUP = 3;

const dir = new URL('../../fixtures/bounces/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as Record<string, Expected>;

interface Tally { total: number; agreed: number; files: Set<string> }
const tally = () => ({ total: 0, agreed: 0, files: new Set<string>() });
const byReason = new Map<string, Tally>(BOUNCE_REASONS.map((r) => [r, tally()]));
const byFamily = new Map<string, Tally>();
const mismatches: string[] = [];
let senderSideDead = 0;

for (const [file, want] of Object.entries(manifest)) {
  const read = await readReturnedMail(readFileSync(new URL(file, dir)));
  if (read.kind !== want.kind) mismatches.push(`${file}: kind ${read.kind}, expected ${want.kind}`);
  // The families the dialect reader knows must be recognised as such.
  if ((MTA_FAMILIES as readonly (string | null)[]).includes(want.family) && read.mta !== want.family) mismatches.push(`${file}: MTA ${read.mta}, expected ${want.family}`);
  const got = read.recipients.filter((r) => r.action === 'failed' || r.action === 'delayed');
  if (got.length !== want.recipients.length) mismatches.push(`${file}: ${got.length} failed recipients, expected ${want.recipients.length}`);
  for (const r of got) if (r.side === 'sender' && r.dead) senderSideDead++;
  for (const w of want.recipients) {
    const r = got.find((x) => x.email.toLowerCase() === w.email.toLowerCase());
    const agreed = !!r && r.status === w.status && r.reason === w.reason && r.dead === w.dead;
    if (!agreed) mismatches.push(`${file} ${w.email}: got ${r ? `${r.status} ${r.reason} dead=${r.dead}` : 'nothing'}, expected ${w.status} ${w.reason} dead=${w.dead}`);
    for (const [map, key] of [[byReason, w.reason], [byFamily, want.family ?? 'none']] as const) {
      const t = map.get(key) ?? tally();
      map.set(key, t);
      t.total++;
      if (agreed) t.agreed++;
      t.files.add(file);
    }
  }
}

const pct = (t: Tally) => (t.total === 0 ? '-' : `${((100 * t.agreed) / t.total).toFixed(1)} %`);
const table = (title: string, map: Map<string, Tally>) =>
  [title, ...[...map].sort(([a], [b]) => a.localeCompare(b)).map(([k, t]) => `  ${k.padEnd(18)} ${String(t.agreed).padStart(3)}/${String(t.total).padEnd(3)} ${pct(t).padStart(8)}  ${t.files.size} files`)].join('\n');
const all = [...byReason.values()].reduce((a, t) => ({ total: a.total + t.total, agreed: a.agreed + t.agreed, files: a.files }), tally());
console.log(`${table('agreement by reason (status, reason, dead):', byReason)}\n${table('fixtures by MTA family:', byFamily)}\n  all ${all.agreed}/${all.total} ${pct(all)}, sender-side marked dead: ${senderSideDead}`);

test('fixtures: every failed recipient reads as expected.json says ({status, reason, dead}), and every known MTA family is recognised, 100 %', () => {
  assert.deepEqual(mismatches, []);
});

test(`fixtures: at least ${MIN_PER_GROUP} recipients for every reason of the taxonomy`, () => {
  for (const [reason, t] of byReason) assert.ok(t.total >= MIN_PER_GROUP, `${reason}: ${t.total}`);
});

test(`fixtures: at least ${MIN_PER_GROUP} bounces for every supported MTA family`, () => {
  for (const family of FAMILIES) assert.ok((byFamily.get(family)?.files.size ?? 0) >= MIN_PER_GROUP, `${family}: ${byFamily.get(family)?.files.size ?? 0}`);
});

test('fixtures: no sender-side refusal is dead, and every dead one is on the dead side', () => {
  assert.equal(senderSideDead, 0);
  for (const want of Object.values(manifest)) for (const w of want.recipients) if (w.dead) assert.equal(sideOf(w.reason), 'dead', w.email);
});
