import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { selectIdleWork } from '../../src/db/queries/idle-work.js';
import { queueBuiltInEvents } from '../../src/db/queries/automations/pending.js';
import { runPendingTriggers } from '../../src/domain/automations/pending.js';
import { automationAccount, DAY, engineOf, makeAutomation } from './helpers.js';

// The worker's idle probe (src/workers/idle-probe.ts) wakes the automation engine, the queued
// triggers, the double opt-in mails and the campaign step only when their claims would find something: each
// answer must be true exactly while there is such work, and false once it is done.
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock });
const acme = await createTestAccount(pool);
const { api, templateId, from } = await automationAccount(app, pool, config, acme);
const drain = engineOf(pool, config, clock);
const none = { automationRuns: false, pendingTriggers: false, confirmations: false, campaigns: false };

test('idle work: due runs, queued triggers and unsent confirmations are each seen while they wait, and not once handled', async () => {
  assert.deepEqual(await selectIdleWork(pool, clock.now()), none);

  // A run waiting 1 day: not due until then.
  await makeAutomation(api, { trigger: { event: 'signup' }, steps: [{ type: 'wait', duration: '1d' }, { type: 'send', templateId, from }] });
  const res = await app.inject({ method: 'POST', url: '/api/v1/automations/trigger', headers: acme.live, payload: { event: 'signup', email: 'ada@example.com' } });
  assert.equal(res.statusCode, 202, res.body);
  assert.equal((await selectIdleWork(pool, clock.now())).automationRuns, true, 'a started run is due at once');
  await drain();
  assert.deepEqual(await selectIdleWork(pool, clock.now()), none, 'waiting a day: nothing due');
  clock.advance(DAY);
  assert.deepEqual(await selectIdleWork(pool, clock.now()), { ...none, automationRuns: true }, 'the wait is over');
  await drain();
  assert.deepEqual(await selectIdleWork(pool, clock.now()), none);

  // A trigger queued by a bulk write.
  await queueBuiltInEvents(pool, acme.accountId, 'signup', [{ email: 'bob@example.com', data: {} }], clock.now());
  assert.deepEqual(await selectIdleWork(pool, clock.now()), { ...none, pendingTriggers: true });
  assert.equal(await runPendingTriggers(pool, () => clock.now()), 1);
  assert.equal((await selectIdleWork(pool, clock.now())).pendingTriggers, false);
  await drain();

  // A double opt-in subscription: its confirmation mail is work until sent.
  const list = await api.post('/api/v1/lists', { name: 'News', doubleOptIn: true });
  assert.equal(list.status, 201);
  const sub = await api.post('/api/v1/subscribers', { email: 'cy@example.com', list: list.body.id });
  assert.equal(sub.status, 201, JSON.stringify(sub.body));
  assert.deepEqual(await selectIdleWork(pool, clock.now()), { ...none, confirmations: true });
  await pool.query(`UPDATE subscriber_confirmations SET sent_at = $1`, [clock.now()]);
  assert.deepEqual(await selectIdleWork(pool, clock.now()), none);
});

test('idle work: a campaign is work while sending, or once its schedule is due; a draft, a sent one or a later schedule is not', async () => {
  const list = await api.post('/api/v1/lists', { name: 'Campaign list' });
  assert.equal(list.status, 201);
  const draft = await api.post('/api/v1/campaigns', { name: 'C', audience: { lists: [list.body.id] }, subject: 'Hi', html: '<p>Hi</p>', from });
  assert.equal(draft.status, 201, JSON.stringify(draft.body));
  const id = draft.body.id;
  assert.equal((await selectIdleWork(pool, clock.now())).campaigns, false, 'a draft');
  await pool.query(`UPDATE campaigns SET status = 'scheduled', scheduled_at = $2 WHERE id = $1`, [id, new Date(clock.now().getTime() + 60_000)]);
  assert.equal((await selectIdleWork(pool, clock.now())).campaigns, false, 'scheduled for later');
  clock.advance(60_000);
  assert.equal((await selectIdleWork(pool, clock.now())).campaigns, true, 'its schedule is due');
  await pool.query(`UPDATE campaigns SET status = 'sending' WHERE id = $1`, [id]);
  assert.equal((await selectIdleWork(pool, clock.now())).campaigns, true, 'sending');
  await pool.query(`UPDATE campaigns SET status = 'sent' WHERE id = $1`, [id]);
  assert.equal((await selectIdleWork(pool, clock.now())).campaigns, false, 'sent');
});
