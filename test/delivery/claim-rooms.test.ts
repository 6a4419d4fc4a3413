import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { claimDueMessages } from '../../src/delivery/queue.js';
import { Shaping } from '../../src/delivery/shaping.js';
import { destinationFor, SHIPPED_POLICY } from '../../src/delivery-policy.js';
import { basicEmail, startMailEnv } from '../helpers/mail-env.js';

// The claim takes no more of a destination than this worker's gates have room for
// (Shaping.claimRooms): the rest stays queued for another worker instead of being claimed and
// handed straight back.
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { pool } = env;

async function queue(recipients: string[]): Promise<void> {
  const emails = recipients.map((to) => basicEmail({ to }));
  const res = await env.app.inject({ method: 'POST', url: '/api/v1/emails/batch', headers: { ...env.acme.live, 'content-type': 'application/json' }, payload: { emails } });
  assert.equal(res.statusCode, 200, res.body);
}

test('claim: a destination\'s room caps what is taken of it (its domains together), other mail is taken in full, the rest stays queued for another worker', async () => {
  // Two domains behind one destination (room 3), one domain of a full one (room 0), one unknown.
  await queue([
    ...[1, 2, 3].map((i) => `a${i}@one.example`),
    ...[1, 2, 3].map((i) => `b${i}@two.example`),
    ...[1, 2].map((i) => `c${i}@full.example`),
    ...[1, 2].map((i) => `d${i}@new.example`),
  ]);
  const rooms = { domains: ['one.example', 'two.example', 'full.example'], destinations: ['mx:shared', 'mx:shared', 'mx:full'], rooms: [3, 3, 0] };
  const first = await claimDueMessages(pool, 'w1', clock.now(), 50, 60_000, { rooms });
  const byDomain = (rows: { to_domain: string }[]) => rows.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.to_domain]: (acc[r.to_domain] ?? 0) + 1 }), {});
  const got = byDomain(first);
  assert.equal((got['one.example'] ?? 0) + (got['two.example'] ?? 0), 3, 'the shared destination: its room, over both its domains');
  assert.equal(got['full.example'], undefined, 'no room: none taken');
  assert.equal(got['new.example'], 2, 'a destination not seen yet: not capped');
  assert.ok(first.every((m) => m.status === 'sending' && m.locked_by === 'w1' && m.attempts === 1));

  // Untouched rows are neither claimed nor altered: another worker takes them as they were.
  const left = await pool.query(`SELECT count(*)::int AS n FROM messages WHERE status = 'queued' AND attempts = 0 AND locked_by IS NULL`);
  assert.equal(left.rows[0].n, 5);
  const second = await claimDueMessages(pool, 'w2', clock.now(), 50, 60_000);
  assert.equal(second.length, 5);
  const rest = byDomain(second);
  assert.equal((rest['one.example'] ?? 0) + (rest['two.example'] ?? 0), 3);
  assert.equal(rest['full.example'], 2);
});

test('claim: the oldest of a capped destination go first', async () => {
  await pool.query(`DELETE FROM messages`);
  await queue(['x1@one.example']);
  clock.advance(1_000);
  await queue(['x2@one.example']);
  const rooms = { domains: ['one.example'], destinations: ['mx:one'], rooms: [1] };
  const [m] = await claimDueMessages(pool, 'w1', clock.now(), 10, 60_000, { rooms });
  assert.equal(m.to_email, 'x1@one.example');
});

test('claimRooms: a destination\'s room is its open gates\' cap less what this worker holds of its domains; a suspended one has none; one no gate knows is not capped', () => {
  const shaping = new Shaping({ db: pool, clock, worker: 'w1', maxConnectionsPerWorker: 10, onSlotClosed() {}, onError() {} });
  const dest = destinationFor(SHIPPED_POLICY, ['mx.one.example']);
  shaping.route('one.example', dest);
  shaping.route('two.example', dest);
  const cap = shaping.gate(dest).cap;
  assert.equal(cap, 80, 'default block: 20 connections × 4');
  const held = new Map([['one.example', 30], ['two.example', 20], ['elsewhere.example', 500]]);
  assert.deepEqual(shaping.claimRooms(held), { domains: ['one.example', 'two.example'], destinations: [dest.key, dest.key], rooms: [30, 30] });
  assert.deepEqual(shaping.claimRooms(new Map([['one.example', 95]])).rooms, [0, 0], 'never below none');
  shaping.gate(dest).suspend(clock.now().getTime() + 60_000);
  assert.deepEqual(shaping.claimRooms(new Map()).rooms, [0, 0], 'suspended: no room');
});
