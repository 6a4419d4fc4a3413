import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { leaseDestination, selectDestinationStatus, throttleDestination, type LeaseRequest } from '../../src/db/queries/shaping.js';
import { SHAPING_LEASE_MS } from '../../src/delivery/gate.js';
import { bucketOf } from '../../src/delivery/token-bucket.js';
import { testDatabase } from '../helpers/db.js';

/**
 * The shared shaping state (migration 023) as several workers see it, on a clock the test
 * moves: connection slots never oversubscribed, a dead worker's share back when its lease
 * ends, per-minute tokens within the limit over any minute, suspensions and the AIMD climb.
 */
const { pool } = await testDatabase();

function requester(dest: string, clock: ManualClock, limits: { maxConnections: number; messagesPerMinute: number | null; perDay?: number | null; rampMs?: number }) {
  const { rate, burst } = bucketOf({ messagesPerMinute: limits.messagesPerMinute });
  return (worker: string, want: Partial<Pick<LeaseRequest, 'wantConnections' | 'open' | 'inFlight' | 'wantTokens' | 'sent'>>) =>
    leaseDestination(pool, {
      destination: dest, source: '', provider: 'test', worker, now: clock.now(),
      wantConnections: 0, open: 0, inFlight: 0, wantTokens: 0, sent: 0, ...want,
      maxConnections: limits.maxConnections, rate, burst, perDay: limits.perDay ?? null, leaseMs: SHAPING_LEASE_MS, rampMs: limits.rampMs ?? 60_000,
    });
}

test('shaping: connection slots are shared across workers, never oversubscribed, split fairly, and a dead worker\'s share comes back when its lease ends', async () => {
  const clock = new ManualClock();
  const ask = requester('mx:slots', clock, { maxConnections: 4, messagesPerMinute: null });
  assert.equal((await ask('w1', { wantConnections: 4 })).connections, 4);
  assert.equal((await ask('w2', { wantConnections: 4 })).connections, 0, 'all four are held');
  // w1 renews while w2 waits: its grant drops to its fair share, but its open connections still count until they close.
  assert.equal((await ask('w1', { wantConnections: 4, open: 4 })).connections, 2);
  assert.equal((await ask('w2', { wantConnections: 4 })).connections, 0, 'w1 still has 4 open');
  assert.equal((await ask('w1', { wantConnections: 4, open: 2 })).connections, 2);
  assert.equal((await ask('w2', { wantConnections: 4 })).connections, 2);
  const held = await pool.query(`SELECT sum(connections)::int AS n FROM delivery_leases WHERE destination = 'mx:slots'`);
  assert.equal(held.rows[0].n, 4);
  // w1 dies: nothing changes until its lease expires, then w2 may take all four.
  clock.advance(SHAPING_LEASE_MS - 1);
  assert.equal((await ask('w2', { wantConnections: 4, open: 2 })).connections, 2);
  clock.advance(1);
  assert.equal((await ask('w2', { wantConnections: 4, open: 2 })).connections, 4);
  // A worker wanting nothing with nothing open gives its lease up at once.
  await ask('w2', {});
  assert.equal((await pool.query(`SELECT count(*)::int AS n FROM delivery_leases WHERE destination = 'mx:slots'`)).rows[0].n, 0);
});

test('shaping: per-minute tokens from one bucket hold the limit over any sliding minute, for three workers asking at once', async () => {
  const clock = new ManualClock();
  const perMinute = 120;
  const ask = requester('mx:tokens', clock, { maxConnections: 10, messagesPerMinute: perMinute });
  const grants: { at: number; n: number }[] = [];
  for (let ms = 0; ms < 180_000; ms += 250) {
    clock.set(new Date(Date.parse('2026-11-20T10:00:00.000Z') + ms));
    const results = await Promise.all(['a', 'b', 'c'].map((w) => ask(w, { wantConnections: 1, wantTokens: 7 })));
    for (const r of results) if (r.tokens > 0) grants.push({ at: ms, n: r.tokens });
    // One asks only for what it lacks: a refusal says when the next token is due.
    if (results.every((r) => r.tokens === 0)) assert.ok(results[0].retryMs > 0 && results[0].retryMs <= 1000, String(results[0].retryMs));
  }
  let peak = 0;
  for (const g of grants) peak = Math.max(peak, grants.filter((h) => h.at >= g.at && h.at < g.at + 60_000).reduce((s, h) => s + h.n, 0));
  assert.ok(peak <= perMinute, `${peak} tokens within a minute`);
  const total = grants.reduce((s, g) => s + g.n, 0);
  assert.ok(total >= 0.9 * perMinute * 3, `${total} tokens in three minutes: the limit is used`);
});

test('shaping: a throttle suspends the destination for every worker, then it resumes at the reduced rate and climbs back a tenth per ramp period', async () => {
  const clock = new ManualClock();
  const ask = requester('gmail', clock, { maxConnections: 10, messagesPerMinute: 600, rampMs: 1000 });
  assert.equal((await ask('w1', { wantConnections: 10, wantTokens: 5 })).tokens, 5);
  const until = await throttleDestination(pool, { destination: 'gmail', source: '', provider: 'gmail', now: clock.now(), until: new Date(clock.now().getTime() + 15_000), reply: '421-4.7.28 rate limited', decrease: 0.5 });
  // A reply to another message in flight does not compound the decrease, nor shorten the suspension.
  await throttleDestination(pool, { destination: 'gmail', source: '', provider: 'gmail', now: clock.now(), until: new Date(clock.now().getTime() + 5_000), reply: '421-4.7.28 again', decrease: 0.5 });
  const during = await ask('w2', { wantConnections: 10, wantTokens: 5 });
  assert.deepEqual([during.connections, during.tokens, during.suspendedUntil?.getTime(), during.retryMs], [0, 0, until.getTime(), 15_000]);
  clock.advance(15_000);
  const resumed = await ask('w2', { wantConnections: 10, wantTokens: 100 });
  assert.equal(resumed.rateFactor, 0.5);
  assert.equal(resumed.connections, 5, 'half the connections');
  clock.advance(1000);
  assert.equal((await ask('w2', { wantConnections: 10 })).rateFactor, 0.6);
  clock.advance(10_000);
  const back = await ask('w2', { wantConnections: 10 });
  assert.equal(back.rateFactor, 1);
  assert.equal(back.connections, 10);
  const [row] = (await selectDestinationStatus(pool, clock.now(), 3_600_000)).filter((r) => r.destination === 'gmail');
  assert.equal(row.last_throttle_reply, '421-4.7.28 again');
});

test('shaping: a relay\'s 24-hour quota (messagesPerDay): granted up to it, then none until the day is over', async () => {
  const clock = new ManualClock();
  const ask = requester('relay', clock, { maxConnections: 2, messagesPerMinute: null, perDay: 5 });
  assert.equal((await ask('w1', { wantConnections: 1, wantTokens: 3 })).tokens, 3);
  assert.equal((await ask('w2', { wantConnections: 1, wantTokens: 3 })).tokens, 2);
  const out = await ask('w1', { wantConnections: 1, wantTokens: 3 });
  assert.equal(out.tokens, 0);
  assert.equal(out.retryMs, 24 * 3_600_000);
  clock.advance(24 * 3_600_000);
  assert.equal((await ask('w1', { wantConnections: 1, wantTokens: 3 })).tokens, 3);
});
