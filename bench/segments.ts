/**
 * bench/segments: live segment counts on 100,000 subscribers (the target: < 200 ms).
 * On a scratch embedded PostgreSQL (or DATABASE_URL), bulk-loads one account with N
 * subscribers carrying attributes, list memberships and engagement events (set-based
 * generate_series inserts, a few seconds), plus a second account of noise, then times
 * countSegment — the code path of GET /api/v1/segments/{id} — for segments of every kind, and
 * one page of segments with their counts (GET /api/v1/segments).
 *
 *   npm run bench:segments -- [--subscribers 100000] [--events 300000] [--runs 7] [--events-index]
 *
 * --events-index first creates events (account_id, type, occurred_at) INCLUDE (email) on the
 * scratch database, the index engagement conditions ("opened within 30 days") would want
 * beside the per-address events_engagement index; it shows what that index is worth.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/open.js';
import { createAccount } from '../src/domain/accounts.js';
import { createList } from '../src/domain/audience/lists.js';
import { parseSegmentDefinition } from '../src/domain/audience/segment-sql.js';
import { countSegment, createSegment, listSegments } from '../src/domain/audience/segments.js';

const { values } = parseArgs({
  options: { subscribers: { type: 'string', default: '100000' }, events: { type: 'string', default: '300000' }, runs: { type: 'string', default: '7' }, 'events-index': { type: 'boolean', default: false } },
});
const N = Number(values.subscribers);
const EVENTS = Number(values.events);
const RUNS = Number(values.runs);

const dataDir = mkdtempSync(join(tmpdir(), 'postline-bench-segments-'));
const config = loadConfig({ ...process.env, POSTLINE_DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
const db = await openDatabase(config, { owner: true, poolSize: 4 });
const pool = db.pool;

/** Loads `n` subscribers into an account, ~50% in list a and ~20% in list b, and events. */
async function load(accountId: string, n: number, events: number, listA: string, listB: string): Promise<void> {
  // Ids: 'sub_' + 32 hex, unique; the cities and plans cycle so selectivities are known.
  await pool.query(
    `INSERT INTO subscribers (id, account_id, email, email_key, name, status, attributes, created_at, updated_at)
     SELECT 'sub_' || replace(gen_random_uuid()::text, '-', ''), $1, 'user' || i || '@example' || (i % 50) || '.com',
            'user' || i || '@example' || (i % 50) || '.com',
            CASE WHEN i % 7 = 0 THEN NULL ELSE 'User ' || i || CASE WHEN i % 100 = 0 THEN ' Smith' ELSE '' END END,
            (ARRAY['active','active','active','active','active','active','unconfirmed','unsubscribed','bounced','complained'])[1 + i % 10],
            jsonb_build_object(
              'plan', (ARRAY['free','free','free','pro','team','enterprise'])[1 + i % 6],
              'seats', 1 + (i * 37) % 100,
              'vip', i % 9 = 0,
              'renews', to_char(date '2026-01-01' + (i % 730), 'YYYY-MM-DD'),
              'city', 'City ' || (i % 20)),
            now() - make_interval(mins => i), now()
       FROM generate_series(1, $2::int) AS i`,
    [accountId, n],
  );
  await pool.query(
    `INSERT INTO subscriber_lists (list_id, subscriber_id, account_id, created_at)
     SELECT CASE WHEN random() < 0.7 THEN $2 ELSE $3 END, id, $1, now()
       FROM subscribers WHERE account_id = $1 AND random() < 0.7
     ON CONFLICT DO NOTHING`,
    [accountId, listA, listB],
  );
  await pool.query(
    `INSERT INTO events (id, account_id, type, email, occurred_at)
     SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), $1,
            (ARRAY['delivered','delivered','open','click','sent'])[1 + i % 5],
            'user' || (1 + (i::bigint * 7919) % $2::int) || '@example' || ((1 + (i::bigint * 7919) % $2::int) % 50) || '.com',
            now() - make_interval(hours => (i * 13) % (90 * 24))
       FROM generate_series(1, $3::int) AS i`,
    [accountId, n, events],
  );
}

const t0 = performance.now();
const acme = await createAccount(pool, { name: 'bench' });
const noise = await createAccount(pool, { name: 'noise' });
const L1 = await createList(pool, acme.id, { name: 'Newsletter' });
const L2 = await createList(pool, acme.id, { name: 'Product updates' });
const N1 = await createList(pool, noise.id, { name: 'Noise' });
await load(acme.id, N, EVENTS, L1.id, L2.id);
await load(noise.id, Math.round(N / 5), Math.round(EVENTS / 5), N1.id, N1.id);
if (values['events-index']) await pool.query('CREATE INDEX IF NOT EXISTS bench_events_type_time ON events (account_id, type, occurred_at) INCLUDE (email)');
// What autovacuum would have done by the time anyone counts: statistics and the visibility map.
for (const table of ['subscribers', 'subscriber_lists', 'events']) await pool.query(`VACUUM ANALYZE ${table}`);
const load1 = loadavg()[0].toFixed(1);
process.stdout.write(`loaded ${N} subscribers (+${Math.round(N / 5)} in another account) and ${EVENTS} events in ${((performance.now() - t0) / 1000).toFixed(1)} s; `
  + `PostgreSQL ${(await pool.query('SHOW server_version')).rows[0].server_version}, node ${process.version}; load average ${load1}${values['events-index'] ? '; with the events (account_id, type, occurred_at) index' : ''}\n\n`);

const segments: [string, unknown[], ('all' | 'any')?][] = [
  ['status eq active', [{ field: 'status', op: 'eq', value: 'active' }]],
  ['attributes.plan eq pro', [{ field: 'attributes.plan', op: 'eq', value: 'pro' }]],
  ['attributes.seats gt 50 (numeric)', [{ field: 'attributes.seats', op: 'gt', value: 50 }]],
  ['attributes.renews lt 2026-07-01 (date)', [{ field: 'attributes.renews', op: 'lt', value: '2026-07-01' }]],
  ['name contains smith', [{ field: 'name', op: 'contains', value: 'smith' }]],
  ['list eq L1 and vip', [{ field: 'list', op: 'eq', value: L1.id }, { field: 'attributes.vip', op: 'eq', value: true }]],
  ['opened within 30 days', [{ field: 'opened', op: 'within', value: 30 }]],
  ['not received within 60 days', [{ field: 'received', op: 'not_within', value: 60 }]],
  ['nested: active, (pro|team or clicked 7d), not in L2', [
    { field: 'status', op: 'eq', value: 'active' },
    { match: 'any', conditions: [{ field: 'attributes.plan', op: 'in', value: ['pro', 'team'] }, { field: 'clicked', op: 'within', value: 7 }] },
    { field: 'list', op: 'neq', value: L2.id },
  ]],
  ['any: email contains example7 | city eq City 3', [{ field: 'email', op: 'contains', value: 'example7' }, { field: 'attributes.city', op: 'eq', value: 'City 3' }], 'any'],
];

async function time<T>(fn: () => Promise<T>): Promise<{ value: T; median: number; max: number }> {
  let value = await fn(); // warm-up (plans, caches)
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    value = await fn();
    ms.push(performance.now() - s);
  }
  ms.sort((a, b) => a - b);
  return { value, median: ms[Math.floor(ms.length / 2)], max: ms[ms.length - 1] };
}

const rows: string[][] = [['segment', 'matches', 'median ms', 'max ms']];
let worst = 0;
for (const [label, conditions, match] of segments) {
  const def = parseSegmentDefinition({ match: match ?? 'all', conditions });
  const r = await time(() => countSegment(pool, acme.id, def));
  worst = Math.max(worst, r.median);
  rows.push([label, String(r.value), r.median.toFixed(1), r.max.toFixed(1)]);
  await createSegment(pool, acme.id, { name: label, match: match ?? 'all', conditions });
}
const page = await time(() => listSegments(pool, acme.id, { limit: 50, order: 'desc', afterId: null }));
rows.push([`GET /segments page of ${page.value.length} (counts 4 at a time)`, '-', page.median.toFixed(1), page.max.toFixed(1)]);

const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
for (const r of rows) process.stdout.write(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('   ') + '\n');
process.stdout.write(`\nslowest single segment count (median of ${RUNS}): ${worst.toFixed(1)} ms on ${N} subscribers — target < 200 ms: ${worst < 200 ? 'met' : 'NOT met'}\n`);

await db.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
