import { test } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../../src/clock.js';
import { Shaping } from '../../src/delivery/shaping.js';
import { destinationFor, SHIPPED_POLICY, type ProviderPolicy } from '../../src/delivery-policy.js';
import { testDatabase } from '../helpers/db.js';

// A gate asks the database only when a call could serve its waiting messages: a destination
// without a per-minute limit, whose slots are all granted, waits for its own turns to end.
const { pool } = await testDatabase();

function countLeaseCalls(): () => number {
  let n = 0;
  const original = pool.query.bind(pool) as (...a: unknown[]) => unknown;
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : '';
    if (text.includes('delivery_lease(')) n++;
    return original(...args);
  };
  return () => n;
}
const leaseCalls = countLeaseCalls();

/** `n` messages through the destination's gate, `parallel` at once, each holding its slot for a few ms. */
async function flow(shaping: Shaping, policy: ProviderPolicy, mx: string, n: number, parallel: number): Promise<number> {
  const gate = shaping.route(`${mx}.test`, { ...destinationFor({ ...SHIPPED_POLICY, default: policy }, [mx]) });
  let maxBusy = 0;
  let busy = 0;
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < n) {
      next++;
      const turn = await gate.turn();
      assert.ok('slot' in turn, 'a turn, not a wait');
      busy++;
      maxBusy = Math.max(maxBusy, busy);
      await new Promise((r) => setTimeout(r, 2));
      busy--;
      gate.done(turn.slot, true);
    }
  }));
  return maxBusy;
}

test('gate: 300 messages to a destination without a rate limit cost a handful of lease calls, not one per message; slots still hold', async () => {
  const shaping = new Shaping({ db: pool, clock: systemClock, worker: 'w1', maxConnectionsPerWorker: 10, onSlotClosed() {}, onError: (err) => assert.fail(String(err)) });
  const before = leaseCalls();
  const maxBusy = await flow(shaping, { ...SHIPPED_POLICY.default, maxConnections: 4 }, 'mx.unlimited', 300, 40);
  const calls = leaseCalls() - before;
  assert.ok(maxBusy <= 4, `${maxBusy} turns at once with 4 connections allowed`);
  assert.ok(calls <= 10, `${calls} lease calls for 300 messages`);
  await shaping.close();
});

test('gate: with a per-minute limit, tokens are still asked for in batches, and past the bucket the rate paces the turns', async () => {
  const shaping = new Shaping({ db: pool, clock: systemClock, worker: 'w2', maxConnectionsPerWorker: 10, onSlotClosed() {}, onError: (err) => assert.fail(String(err)) });
  const before = leaseCalls();
  const t0 = Date.now();
  // 6,000 a minute: a bucket of 200, then 100 a second.
  await flow(shaping, { ...SHIPPED_POLICY.default, maxConnections: 4, messagesPerMinute: 6000 }, 'mx.limited', 250, 40);
  const calls = leaseCalls() - before;
  assert.ok(calls < 100, `${calls} lease calls for 250 messages`);
  assert.ok(Date.now() - t0 >= 300, 'past the bucket, the rate paces the turns');
  await shaping.close();
});

test('gate: messages waiting while every connection is in its close grace get a turn as soon as the grace ends, not at the next lease renewal', async () => {
  // One connection carrying one message each: after every message the only slot is in its
  // close grace (250 ms) and every other message waits for it. Without a heartbeat (not
  // started here) nothing but the gate's own timer can hand the slot on.
  const shaping = new Shaping({ db: pool, clock: systemClock, worker: 'w3', maxConnectionsPerWorker: 10, onSlotClosed() {}, onError: (err) => assert.fail(String(err)) });
  const t0 = Date.now();
  await flow(shaping, { ...SHIPPED_POLICY.default, maxConnections: 1, messagesPerConnection: 1 }, 'mx.recycled', 8, 4);
  const ms = Date.now() - t0;
  // 7 graces of 250 ms, and a few ms each for the sends and the first lease.
  assert.ok(ms >= 7 * 250, `${ms} ms: the grace held`);
  assert.ok(ms < 7 * 250 + 600, `${ms} ms for 8 messages: a turn waited past its grace`);
  await shaping.close();
});

test('gate: a connection whose QUIT the receiver answered frees its slot at once, not after the grace', async () => {
  // As the engine's sender does: the receiver has seen the connection go (here at once).
  const shaping = new Shaping({ db: pool, clock: systemClock, worker: 'w4', maxConnectionsPerWorker: 10, onSlotClosed: (_dest, _slot, gone) => setImmediate(gone), onError: (err) => assert.fail(String(err)) });
  const t0 = Date.now();
  const maxBusy = await flow(shaping, { ...SHIPPED_POLICY.default, maxConnections: 1, messagesPerConnection: 1 }, 'mx.answered', 8, 4);
  const ms = Date.now() - t0;
  assert.equal(maxBusy, 1, 'still one connection at a time');
  assert.ok(ms < 7 * 250, `${ms} ms for 8 messages: the slots waited for the grace`);
  await shaping.close();
});

test('gate: a lease call made while the claimed messages are still being built keeps a slot for each of them, within the caps', async () => {
  // Between two claims the gate holds no message running or waiting; the next claim's are
  // being built (pending). The heartbeat's renewal then must not give the slots back: the
  // connections beyond the grant would be closed and opened again a moment later.
  const shaping = new Shaping({ db: pool, clock: systemClock, worker: 'w5', maxConnectionsPerWorker: 10, onSlotClosed() {}, onError: (err) => assert.fail(String(err)) });
  const gate = shaping.route('mx.building.test', destinationFor({ ...SHIPPED_POLICY, default: { ...SHIPPED_POLICY.default, maxConnections: 6 } }, ['mx.building']));
  const held = async () => (await pool.query(`SELECT coalesce(sum(connections), 0)::int AS n FROM delivery_leases WHERE worker = 'w5'`)).rows[0].n as number;
  gate.pending = 4;
  await gate.lease();
  assert.equal(await held(), 4, 'a slot for each message being built');
  gate.pending = 40;
  await gate.lease();
  assert.equal(await held(), 6, 'never more than the destination allows');
  gate.pending = 0;
  await shaping.close();
});
