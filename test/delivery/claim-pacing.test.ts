import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.js';
import { ClaimPacing, NEW_MAIL_GATHER_MS, type Schedule } from '../../src/delivery/claim-pacing.js';
import { CAMPAIGN_RECHECK_MS } from '../../src/delivery/claimer.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

// While the API accepts, every accept statement announces new mail to the workers. A busy worker
// gathers those announcements into one claim, an idle one claims at once; a campaign claim that
// found nothing is not repeated at every refill of a busy worker
// (docs/decisions/0058-claims-paced-while-busy.md).

/** Timers the test fires itself. */
function manualTimers() {
  const pending: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  const schedule: Schedule = (fn, ms) => {
    const t = { fn, ms, cancelled: false };
    pending.push(t);
    return () => void (t.cancelled = true);
  };
  const live = () => pending.filter((t) => !t.cancelled);
  const fireAll = () => {
    for (const t of pending.splice(0)) if (!t.cancelled) t.fn();
  };
  return { schedule, live, fireAll };
}

test('pacing: an idle worker claims new mail at once; a busy one gathers every announcement of the window into one claim', () => {
  const timers = manualTimers();
  let inFlight = 0;
  let claims = 0;
  const pacing = new ClaimPacing({ inFlight: () => inFlight, claim: () => claims++, schedule: timers.schedule });

  pacing.soon();
  assert.equal(claims, 1, 'nothing in flight: claimed at once');
  assert.equal(timers.live().length, 0);

  inFlight = 40;
  for (let i = 0; i < 25; i++) pacing.soon();
  assert.equal(claims, 1, 'busy: no claim per announcement');
  assert.deepEqual(timers.live().map((t) => t.ms), [NEW_MAIL_GATHER_MS], 'one gathering, of the window');
  timers.fireAll();
  assert.equal(claims, 2, 'one claim for the 25 announcements');

  // A claim made meanwhile for another reason (room in the batch) takes what was announced.
  pacing.soon();
  pacing.claimed();
  timers.fireAll();
  assert.equal(claims, 2, 'the gathering was dropped');
  pacing.soon();
  assert.equal(timers.live().length, 1, 'announcements after that claim start a new gathering');
  pacing.stop();
  assert.equal(timers.live().length, 0);
});

// A slow receiver keeps deliveries in flight; one connection per destination: a gate's cap is 4.
const dir = mkdtempSync(join(tmpdir(), 'postline-pacing-'));
const policyPath = join(dir, 'policy.json');
writeFileSync(policyPath, JSON.stringify({ default: { maxConnections: 1, messagesPerConnection: 1000 } }));
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock, mx: { dataDelayMs: 250, starttls: false }, env: { POSTLINE_DELIVERY_POLICY: policyPath } });

async function send(n: number, prefix: string): Promise<void> {
  for (let i = 0; i < n; i++) assert.equal((await env.send(basicEmail({ to: `${prefix}${i}@${RECIPIENT_DOMAIN}` }))).statusCode, 202);
}

type Engine = ReturnType<typeof env.newEngine>;

/** One refill: how many it claimed, and whether the queue was drained when it then announced room. */
async function refillUntilRoom(engine: Engine, onError: (e: unknown) => void): Promise<{ claimed: number; drained: Promise<boolean> }> {
  let said: (drained: boolean) => void = () => {};
  const drained = new Promise<boolean>((r) => (said = r));
  return { claimed: await engine.refill((d) => said(d), onError), drained };
}

/** Another worker's claim in progress: a transaction holding the rows `select` locks. Returns its end. */
async function heldByAnotherWorker(select: string): Promise<() => Promise<void>> {
  const other = await env.pool.connect();
  await other.query('BEGIN');
  await other.query(select);
  return async () => {
    await other.query('ROLLBACK');
    other.release();
  };
}

/** Refills until every message is delivered, then checks that `n` were and that nothing failed. */
async function deliverTheRest(engine: Engine, errors: unknown[], rounds: number, n: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await engine.refill(() => {}, (e) => void errors.push(e));
    await engine.drain();
  }
  assert.equal(errors.length, 0, String(errors[0]));
  const { rows } = await env.pool.query(`SELECT status, count(*)::int AS n FROM messages GROUP BY status`);
  assert.deepEqual(rows, [{ status: 'delivered', n }]);
}

test('refill: room announced after a claim that took every due message says the queue was drained; after one that filled a destination, it does not', async () => {
  await env.pool.query('DELETE FROM messages');
  const engine = env.newEngine({ batchSize: 8, maxConnectionsPerHost: 1 });
  const errors: unknown[] = [];
  const onError = (e: unknown) => void errors.push(e);

  await send(2, 'd');
  const all = await refillUntilRoom(engine, onError);
  assert.equal(all.claimed, 2);
  assert.equal(await all.drained, true, 'both due messages were claimed and their destination had room left: drained');
  await engine.drain();

  // Ten due for a destination whose gate keeps 4 per worker: the claim takes 4 and fills it.
  await send(10, 'f');
  const full = await refillUntilRoom(engine, onError);
  assert.equal(full.claimed, 4);
  assert.equal(await full.drained, false, 'the destination was full: more is due, the room is claimed at once');
  await engine.drain();
  await deliverTheRest(engine, errors, 4, 12);
  await engine.close();
});

test('refill: a claim that took fewer than it asked for because another worker was claiming the oldest rows has not drained the queue', async () => {
  await env.pool.query('DELETE FROM messages');
  const engine = env.newEngine({ batchSize: 4, maxConnectionsPerHost: 1 });
  const errors: unknown[] = [];
  const onError = (e: unknown) => void errors.push(e);
  await send(6, 'k');
  const release = await heldByAnotherWorker(`SELECT id FROM messages ORDER BY next_attempt_at, id LIMIT 3 FOR UPDATE`);
  const skipped = await refillUntilRoom(engine, onError);
  assert.equal(skipped.claimed, 1, 'the fourth oldest; the three held are skipped');
  await release();
  assert.equal(await skipped.drained, false, 'the claim found as many due as it asked for: more is due behind the skipped rows, the room is claimed at once');
  await engine.drain();
  await deliverTheRest(engine, errors, 3, 6);
  await engine.close();
});

test('refill: a busy worker does not repeat a campaign claim that found none due within CAMPAIGN_RECHECK_MS (one that found them held by another worker, at once); an idle one always looks', async () => {
  await env.pool.query('DELETE FROM messages');
  const engine = env.newEngine({ batchSize: 8, maxConnectionsPerHost: 1 });
  const errors: unknown[] = [];
  const onError = (e: unknown) => void errors.push(e);
  await send(2, 't');
  assert.equal(await engine.refill(() => {}, onError), 2, 'the transactional mail; the campaign claim after it finds nothing');

  // Campaign mail becomes due while those two are in flight (the claim looks only at campaign_id).
  await send(1, 'c');
  await env.pool.query(`UPDATE messages SET campaign_id = 'cmp_pacing', subscriber_id = id WHERE status = 'queued'`);
  assert.ok(engine.inFlightCount > 0, 'the slow receiver keeps the first two in flight');
  assert.equal(await engine.refill(() => {}, onError), 0, 'busy, and the campaign stream was empty a moment ago: not claimed again yet');
  clock.advance(CAMPAIGN_RECHECK_MS);
  assert.equal(await engine.refill(() => {}, onError), 1, 'the window has passed: claimed');
  await engine.drain();

  // Campaign mail due but held by another worker's claim in progress: this claim takes none of
  // it, and that is not "none due": the next refill looks again at once.
  await send(1, 'b');
  assert.equal(await engine.refill(() => {}, onError), 1, 'transactional mail keeps the worker busy; no campaign mail is due');
  await send(2, 'h');
  await env.pool.query(`UPDATE messages SET campaign_id = 'cmp_pacing', subscriber_id = id WHERE status = 'queued'`);
  clock.advance(CAMPAIGN_RECHECK_MS);
  const release = await heldByAnotherWorker(`SELECT id FROM messages WHERE campaign_id IS NOT NULL AND status = 'queued' FOR UPDATE`);
  assert.ok(engine.inFlightCount > 0);
  assert.equal(await engine.refill(() => {}, onError), 0, 'the campaign rows are being claimed by the other worker');
  await release();
  assert.equal(await engine.refill(() => {}, onError), 2, 'they were due all along: looked at again without waiting CAMPAIGN_RECHECK_MS');
  await engine.drain();

  // Campaign mail due only for a destination suspended meanwhile (a throttle reply recorded by
  // another worker): the claim leaves it out of its search, which is not "none due" either.
  await send(1, 'q');
  assert.equal(await engine.refill(() => {}, onError), 1, 'busy again');
  await env.pool.query(
    `INSERT INTO delivery_shaping (destination, provider, suspended_until, factor_at, tokens, tokens_at, active_at)
     VALUES ('mx:mx.throttled.test', 'other', $1, $2, 0, $2, $2)`,
    [new Date(clock.now().getTime() + 3_600_000), clock.now()],
  );
  await env.pool.query(`INSERT INTO delivery_routes (domain, destination, resolved_at) VALUES ('throttled.test', 'mx:mx.throttled.test', $1)`, [clock.now()]);
  assert.equal((await env.send(basicEmail({ to: 'late@throttled.test' }))).statusCode, 202);
  await env.pool.query(`UPDATE messages SET campaign_id = 'cmp_pacing', subscriber_id = id WHERE status = 'queued'`);
  clock.advance(Math.max(CAMPAIGN_RECHECK_MS, 1_000)); // past the recheck, and the shared suspensions are read again
  assert.equal(await engine.refill(() => {}, onError), 0, 'the suspended destination\'s mail is left alone');
  await send(1, 'r');
  await env.pool.query(`UPDATE messages SET campaign_id = 'cmp_pacing', subscriber_id = id WHERE status = 'queued' AND to_domain <> 'throttled.test'`);
  assert.equal(await engine.refill(() => {}, onError), 1, 'campaign mail due meanwhile for another destination: looked for at once');
  await engine.drain();
  await env.pool.query(`DELETE FROM messages WHERE to_domain = 'throttled.test'`);

  // Idle: the campaign stream is looked at by every claim.
  await send(1, 'i');
  await env.pool.query(`UPDATE messages SET campaign_id = 'cmp_pacing', subscriber_id = id WHERE status = 'queued'`);
  assert.equal(await engine.refill(() => {}, onError), 1, 'nothing in flight: claimed at once');
  await engine.drain();
  await engine.close();
});
