import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { notifySoon } from '../../src/db/notify.js';
import { withTransaction } from '../../src/db/pool.js';
import { recordEvents } from '../../src/domain/events.js';
import { startWebhookDispatcher } from '../../src/workers/webhooks.js';
import { Notifications } from '../../src/workers/notifications.js';

// The real loop on the system clock: NOTIFY wakes it, a backlog drains without timers.
// Event writers poke 'postline_events' after they commit (db/notify.ts); so does this test.
const { app, pool, config, clock } = await bootApp();
const acme = await createTestAccount(pool, 'Acme');
const receiver = await startWebhookReceiver();
after(() => receiver.close());

const hook = (await app.inject({
  method: 'POST', url: '/api/v1/hooks', headers: { ...acme.live, 'content-type': 'application/json' }, payload: { url: receiver.url, events: ['delivered', 'open'] },
})).json();

const errors: unknown[] = [];
// A poll of a minute: an event that arrives in seconds was woken by NOTIFY. (Wall time on a
// loaded CI is no measure of speed; bench:webhooks measures latency.)
const dispatcher = startWebhookDispatcher({ config, pool, clock }, (_name, err) => errors.push(err), { pollMs: 60_000 });
// As in the worker role: one LISTEN connection wakes the dispatcher.
const notifications = new Notifications(pool);
notifications.on('postline_events', () => dispatcher.wake());
await notifications.start();

test('an event committed reaches the receiver long before the poll would: NOTIFY wakes the dispatcher', async () => {
  await new Promise((r) => setTimeout(r, 300)); // LISTEN in place, first poll done
  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = receiver.requests.length;
    const t0 = Date.now();
    await withTransaction(pool, (tx) => recordEvents(tx, [{ accountId: acme.accountId, messageId: null, type: 'open', email: 'a@example.com', occurredAt: new Date() }]));
    notifySoon(pool, 'postline_events');
    await receiver.waitFor(before + 1, 20_000);
    latencies.push(receiver.requests[before].receivedAt - t0);
    await new Promise((r) => setTimeout(r, 50));
  }
  latencies.sort((a, b) => a - b);
  assert.ok(latencies[2] < 20_000, `median ${latencies[2]} ms (all: ${latencies.join(', ')})`);
});

test('a backlog of 2,600 drains in 500-event batches without waiting for the poll', async () => {
  const before = receiver.requests.length;
  const t0 = Date.now();
  const rows = Array.from({ length: 2600 }, (_, i) => ({ accountId: acme.accountId, messageId: null, type: 'delivered' as const, email: 'b@example.com', data: { n: i }, occurredAt: new Date() }));
  await recordEvents(pool, rows);
  notifySoon(pool, 'postline_events');
  await receiver.waitFor(before + 6, 30_000);
  const took = Date.now() - t0;
  const got = receiver.requests.slice(before);
  assert.deepEqual(got.map((r) => r.json().events.length), [500, 500, 500, 500, 500, 100]);
  assert.deepEqual(got.flatMap((r) => r.json().events.map((e) => (e.data as { n: number }).n)), rows.map((_, i) => i));
  assert.ok(took < 30_000, `took ${took} ms for 6 batches`);
  assert.equal(got[0].json().hookId, hook.id);
});

test('stop() waits for the batch in flight and records its outcome', async () => {
  receiver.enqueue({ delayMs: 400 });
  const before = receiver.requests.length;
  await recordEvents(pool, [{ accountId: acme.accountId, messageId: null, type: 'open', email: 'c@example.com', occurredAt: new Date() }]);
  try {
    await receiver.waitFor(before + 1, 20_000);
  } finally {
    await dispatcher.stop(); // also before the pool closes, whatever happened above
    await notifications.stop();
  }
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM hook_queue WHERE hook_id = $1`, [hook.id]);
  assert.equal(rows[0].n, 0, 'the slow batch completed before stop() returned');
  assert.deepEqual(errors, []);
});
