import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withTransaction } from '../../src/db/pool.js';
import { triggerEvents, type PendingTrigger } from '../../src/domain/automations/trigger.js';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { automationAccount, engineOf, makeAutomation, type Json } from './helpers.js';

/**
 * Group-committed triggers (POST /automations/trigger writes concurrent triggers in one
 * transaction): a batch must behave exactly as its triggers one after the other, for reentry,
 * waits and idempotency, also when requests for the same addresses arrive at once.
 */

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock });
const acme = await createTestAccount(pool);
const { api } = await automationAccount(app, pool, config, acme);
const drain = engineOf(pool, config, clock);

const trigger = (event: string, email: string, headers: Record<string, string> = acme.live) =>
  app.inject({ method: 'POST', url: '/api/v1/automations/trigger', headers, payload: { event, email } });
const pending = (event: string, email: string): PendingTrigger => ({
  accountId: acme.accountId, input: { event, email }, emailKey: email.toLowerCase(), now: clock.now(),
});
const runsOf = async (automationId: string) =>
  (await pool.query<{ email_key: string; n: number }>('SELECT email_key, count(*)::int AS n FROM automation_runs WHERE automation_id = $1 GROUP BY 1 ORDER BY 1', [automationId])).rows;

test('one batch behaves as its triggers in order: reentry sees runs started earlier in the batch, a wait is woken once', async () => {
  const steps = [{ type: 'wait', until: { event: 'b.paid', timeout: '1d' } }];
  const never = await makeAutomation(api, { trigger: { event: 'b.start' }, steps, reentry: 'never' });
  const afterExit = await makeAutomation(api, { trigger: { event: 'b.start' }, steps, reentry: 'after_exit' });
  const always = await makeAutomation(api, { trigger: { event: 'b.start' }, steps, reentry: 'always' });
  const results = await withTransaction(pool, (tx) => triggerEvents(tx, [
    pending('b.start', 'x@example.com'), pending('b.start', 'x@example.com'), pending('b.start', 'y@example.com'), pending('b.start', 'x@example.com'),
  ]));
  const ids = (r: Json) => r.runs.map((x: Json) => x.automationId).sort();
  assert.deepEqual(ids(results[0]), [never.id, afterExit.id, always.id].sort(), 'the first trigger of x starts all three');
  assert.deepEqual(ids(results[1]), [always.id], 'the second only "always": the others are in progress');
  assert.deepEqual(ids(results[2]), [never.id, afterExit.id, always.id].sort(), 'y is its own address');
  assert.deepEqual(ids(results[3]), [always.id]);
  await drain();
  // Five runs of x wait for b.paid; two b.paid triggers for x in one batch: the first wakes all.
  const woken = await withTransaction(pool, (tx) => triggerEvents(tx, [pending('b.paid', 'x@example.com'), pending('b.paid', 'X@example.com'), pending('b.paid', 'y@example.com')]));
  assert.deepEqual(woken.map((r) => r.resumed), [5, 0, 3]);
  await drain();
  // All ended: after_exit starts again, never does not.
  const again = await withTransaction(pool, (tx) => triggerEvents(tx, [pending('b.start', 'x@example.com')]));
  assert.deepEqual(ids(again[0]), [afterExit.id, always.id].sort());
});

test('concurrent HTTP triggers over a few addresses: never and after_exit start exactly one run per address, always one per trigger', async () => {
  const steps = [{ type: 'wait', duration: '1h' }];
  const never = await makeAutomation(api, { trigger: { event: 'c.start' }, steps, reentry: 'never' });
  const afterExit = await makeAutomation(api, { trigger: { event: 'c.start' }, steps, reentry: 'after_exit' });
  const always = await makeAutomation(api, { trigger: { event: 'c.start' }, steps, reentry: 'always' });
  const addresses = ['p@example.com', 'q@example.com', 'r@example.com', 's@example.com'];
  const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => trigger('c.start', addresses[i % 4])));
  assert.deepEqual([...new Set(responses.map((r) => r.statusCode))], [202]);
  const perAddress = (n: number) => addresses.map((a) => ({ email_key: a, n }));
  assert.deepEqual(await runsOf(never.id), perAddress(1));
  assert.deepEqual(await runsOf(afterExit.id), perAddress(1));
  assert.deepEqual(await runsOf(always.id), perAddress(15));
  // Every run started is in exactly one answer, and the counters agree.
  const answered = responses.flatMap((r) => r.json().runs.map((x: Json) => x.id)).sort();
  const stored = (await pool.query<{ id: string }>('SELECT id FROM automation_runs WHERE automation_id = ANY($1) ORDER BY id', [[never.id, afterExit.id, always.id]])).rows.map((r) => r.id);
  assert.deepEqual(answered, stored);
  assert.equal((await api.get(`/api/v1/automations/${always.id}`)).body.counters.runsStarted, 60);
});

test('concurrent HTTP triggers of the awaited event wake a waiting run exactly once', async () => {
  await makeAutomation(api, { trigger: { event: 'w.start' }, steps: [{ type: 'wait', until: { event: 'w.done', timeout: '1d' } }, { type: 'exit' }] });
  assert.equal((await trigger('w.start', 'waiter@example.com')).statusCode, 202);
  await drain();
  const responses = await Promise.all(Array.from({ length: 12 }, () => trigger('w.done', 'waiter@example.com')));
  assert.equal(responses.reduce((n, r) => n + r.json().resumed, 0), 1);
  await drain();
  const [r] = (await pool.query(`SELECT status, wait_outcome FROM automation_runs WHERE email_key = 'waiter@example.com'`)).rows;
  assert.deepEqual(r, { status: 'exited', wait_outcome: 'event' });
});

test('a trigger in a batch with a test-key trigger: the test key still writes nothing', async () => {
  await makeAutomation(api, { trigger: { event: 'mix' }, steps: [{ type: 'exit' }], reentry: 'always' });
  const responses = await Promise.all([
    trigger('mix', 'live@example.com'), trigger('mix', 'sandbox@example.com', acme.test), trigger('mix', 'live@example.com'),
  ]);
  assert.deepEqual(responses.map((r) => r.statusCode), [202, 202, 202]);
  assert.deepEqual(responses.map((r) => r.json().sandbox), [undefined, true, undefined]);
  assert.equal(responses[1].json().runs.length, 1);
  assert.equal((await pool.query(`SELECT count(*)::int AS n FROM automation_runs WHERE email_key = 'sandbox@example.com'`)).rows[0].n, 0);
  assert.equal((await pool.query(`SELECT count(*)::int AS n FROM automation_runs WHERE email_key = 'live@example.com'`)).rows[0].n, 2);
});
