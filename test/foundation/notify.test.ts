import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testDatabase } from '../helpers/db.js';
import { NOTIFY_GAP_MS, notifySoon } from '../../src/db/notify.js';

// db/notify.ts on a real PostgreSQL: a LISTEN connection counts what the pokes become.
const { pool } = await testDatabase();
const listener = await pool.connect();
const received: number[] = [];
listener.on('notification', (n) => {
  if (n.channel === 'postline_messages') received.push(Date.now());
});
await listener.query('LISTEN postline_messages');

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a lone poke is sent at once', async () => {
  received.length = 0;
  const t0 = Date.now();
  notifySoon(pool, 'postline_messages');
  for (let i = 0; i < 100 && received.length === 0; i++) await settle(5);
  assert.equal(received.length, 1);
  assert.ok(received[0] - t0 < 200, `arrived after ${received[0] - t0} ms`);
  await settle(NOTIFY_GAP_MS * 3);
  assert.equal(received.length, 1, 'one poke, one notification');
});

test('a stream of pokes becomes at most one notification per gap, and the last poke is never dropped', async () => {
  received.length = 0;
  const t0 = Date.now();
  let pokes = 0;
  while (Date.now() - t0 < 300) {
    notifySoon(pool, 'postline_messages');
    pokes++;
    await new Promise((r) => setImmediate(r));
  }
  const lastPoke = Date.now();
  await settle(NOTIFY_GAP_MS * 10);
  const span = lastPoke - t0;
  assert.ok(pokes > 500, `only ${pokes} pokes`);
  assert.ok(received.length >= 2, `${received.length} notifications`);
  assert.ok(received.length <= span / NOTIFY_GAP_MS + 2, `${received.length} notifications for ${pokes} pokes in ${span} ms`);
  assert.ok(received[received.length - 1] >= lastPoke - NOTIFY_GAP_MS, 'a notification follows the last poke');
});

test('pokes on different channels are throttled separately', async () => {
  received.length = 0;
  const events: number[] = [];
  listener.on('notification', (n) => {
    if (n.channel === 'postline_events') events.push(Date.now());
  });
  await listener.query('LISTEN postline_events');
  notifySoon(pool, 'postline_messages');
  notifySoon(pool, 'postline_events');
  await settle(NOTIFY_GAP_MS * 5);
  assert.equal(received.length, 1);
  assert.equal(events.length, 1);
  listener.release();
});
