import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { notifySoon } from '../../src/db/notify.js';
import type { Pool } from '../../src/db/pool.js';
import { recordEvents, type NewEvent } from '../../src/domain/events.js';
import { startWorkers } from '../../src/workers/index.js';
import { Presence } from '../../src/workers/presence.js';
import { automationAccount, makeAutomation } from '../automations/helpers.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

// The worker role on the system clock: new events wake the webhook dispatcher and the
// automation event handler only while a hook is active / an automation exists
// (src/workers/presence.ts); creating one is told to the workers at once.
const { app, pool, config, clock } = await bootApp();
const acme = await createTestAccount(pool, 'Acme');
const receiver = await startWebhookReceiver();
after(() => receiver.close());

/** Counts the statements whose text matches each pattern, on the pool and its clients. */
function countStatements(p: Pool, patterns: Record<string, RegExp>): () => Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(Object.keys(patterns).map((k) => [k, 0]));
  const note = (q: unknown) => {
    const text = typeof q === 'string' ? q : (q as { text?: string } | null)?.text ?? '';
    for (const [k, re] of Object.entries(patterns)) if (re.test(text)) counts[k]++;
  };
  const wrap = <T extends { query: (...a: never[]) => unknown }>(target: T) => {
    const original = target.query.bind(target) as (...a: unknown[]) => unknown;
    (target as { query: unknown }).query = (...args: unknown[]) => {
      note(args[0]);
      return original(...args);
    };
  };
  wrap(p);
  const wrapped = new WeakSet<object>();
  p.on('connect', (client) => {
    if (!wrapped.has(client)) {
      wrapped.add(client);
      wrap(client);
    }
  });
  return () => ({ ...counts });
}

const snapshot = countStatements(pool, { hookClaims: /FROM hooks h\s+WHERE h\.status = 'active'/, automationTakes: /DELETE FROM automation_event_queue/ });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const event = (type: NewEvent['type'], email: string): NewEvent => ({ accountId: acme.accountId, messageId: null, type, email, occurredAt: new Date() });

/** `n` commits of events, each followed by its notification, as delivery records outcomes. */
async function outcomeBatches(n: number, type: NewEvent['type']): Promise<number> {
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    await recordEvents(pool, [event(type, `b${i}@example.com`)]);
    notifySoon(pool, 'postline_events');
    await sleep(30);
  }
  return Date.now() - t0;
}

const workers = await startWorkers({ config, pool, clock, log: pino({ level: 'silent' }) }, { deliveryPollMs: 60_000 });

test('no active hook and no automation: 30 batches of new events wake neither the webhook dispatcher nor the automation event handler', async () => {
  await sleep(1_500); // LISTEN in place, first polls and first reads done
  const before = snapshot();
  const ms = await outcomeBatches(30, 'delivered');
  const after = snapshot();
  // What remains is each loop's poll, once a second (before: one query per batch, and a
  // transaction per batch for the event handler). The margin allows for timers that slip and
  // then catch up on a loaded machine; waking per batch would show 30 or more.
  const polls = Math.ceil(ms / 1000) + 5;
  assert.ok(after.hookClaims - before.hookClaims <= polls, `${after.hookClaims - before.hookClaims} hook claims in ${ms} ms`);
  assert.ok(after.automationTakes - before.automationTakes <= polls, `${after.automationTakes - before.automationTakes} automation queue takes in ${ms} ms`);
});

test('a hook created is told to the worker: events recorded right after it reach the receiver', async () => {
  const res = await app.inject({
    method: 'POST', url: '/api/v1/hooks', headers: { ...acme.live, 'content-type': 'application/json' }, payload: { url: receiver.url, events: ['delivered'] },
  });
  assert.equal(res.statusCode, 201, res.body);
  await recordEvents(pool, [event('delivered', 'first@example.com')]);
  notifySoon(pool, 'postline_events');
  await receiver.waitFor(1, 20_000);
  assert.equal(receiver.requests[0].json().events[0].email, 'first@example.com');
});

test('an automation created is told to the worker: an open right after it starts its run', async () => {
  const { api, from } = await automationAccount(app, pool, config, acme);
  const a = await makeAutomation(api, { trigger: { event: 'email.opened' }, steps: [{ type: 'send', subject: 'Thanks', text: 'Hi', from }] });
  try {
    await recordEvents(pool, [event('open', 'reader@example.com')]);
    notifySoon(pool, 'postline_events');
    const deadline = Date.now() + 20_000;
    let runs = 0;
    while (runs === 0 && Date.now() < deadline) {
      runs = (await pool.query('SELECT count(*)::int AS n FROM automation_runs WHERE automation_id = $1', [a.id])).rows[0].n;
      if (runs === 0) await sleep(50);
    }
    assert.equal(runs, 1);
  } finally {
    await workers.stop();
  }
});

test('Presence: "none" is trusted until a change is told or it grows old; a read under way when a change is told is not trusted', async () => {
  let now = 0;
  let answer = false;
  let reads = 0;
  let release: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  const presence = new Presence(async () => {
    reads++;
    await gate;
    return answer;
  }, { maxAgeMs: 5_000, nowMs: () => now });
  const settle = () => sleep(5);

  assert.equal(presence.mayExist(), true, 'unknown: wake');
  await settle();
  assert.equal(presence.mayExist(), false, 'a fresh "none": skip');
  assert.equal(reads, 1);
  now += 5_000;
  assert.equal(presence.mayExist(), true, 'an old "none" is not trusted');
  await settle();
  assert.equal(reads, 2);
  assert.equal(presence.mayExist(), false);

  // A change told while a read is under way: that read's "none" is dropped.
  presence.changed();
  gate = new Promise<void>((r) => (release = r));
  assert.equal(presence.mayExist(), true);
  presence.changed();
  answer = true;
  release();
  await settle();
  assert.equal(presence.mayExist(), true, 'the stale read was dropped: read again');
  await settle();
  assert.equal(reads, 4);
  assert.equal(presence.mayExist(), true, 'something exists: wake');
});
