import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runPendingImports } from '../../src/domain/audience/imports.js';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { makeList } from '../audience/helpers.js';
import { automationAccount, DAY, engineOf, makeAutomation, type Json } from './helpers.js';

/**
 * Built-in events from the paths the first version left out: imports fire
 * subscriber.created, machine opens do not fire email.opened; and a send to a suppressed
 * address is skipped before anything else about it can fail the run.
 */

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock });
const acme = await createTestAccount(pool);
const { api, from } = await automationAccount(app, pool, config, acme);
const drain = engineOf(pool, config, clock);

const trigger = (event: string, email: string) =>
  app.inject({ method: 'POST', url: '/api/v1/automations/trigger', headers: acme.live, payload: { event, email } });
async function importCsv(csv: string, list: string): Promise<Json> {
  const res = await app.inject({ method: 'POST', url: `/api/v1/subscribers/import?list=${list}`, headers: { ...acme.live, 'content-type': 'text/csv' }, payload: csv });
  assert.equal(res.statusCode, 202, res.body);
  assert.equal(await runPendingImports(pool, { now: () => clock.now() }), 1);
  return (await api.get(`/api/v1/imports/${res.json().id}`)).body;
}
const runsOf = async (automationId: string) =>
  (await pool.query('SELECT email, data, status FROM automation_runs WHERE automation_id = $1 ORDER BY email', [automationId])).rows;

test('an import fires subscriber.created for each new subscriber (list filter and reentry apply), not for updated ones', async () => {
  const welcome = await makeList(app, acme.live, { name: 'Welcome' });
  const other = await makeList(app, acme.live, { name: 'Other' });
  await api.post('/api/v1/subscribers', { email: 'old@example.com', list: other });
  const a = await makeAutomation(api, {
    trigger: { event: 'subscriber.created', filter: { conditions: [{ field: 'list', op: 'eq', value: welcome }] } },
    steps: [{ type: 'send', subject: 'Welcome {{ subscriber.name | friend }}', text: 'Hi', from }],
  });
  const n = 120;
  const rows = Array.from({ length: n }, (_, i) => `new${String(i).padStart(3, '0')}@example.com,New ${i}`);
  const done = await importCsv(['email,name', ...rows, 'old@example.com,Old', 'new000@example.com,Again'].join('\n'), welcome);
  assert.equal(done.created, n);
  assert.equal(done.updated, 2);
  // Queued with the import, started by the worker: nothing runs before the worker's pass.
  assert.equal((await runsOf(a.id)).length, 0);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM automation_pending_triggers')).rows[0].n, n);
  await drain();
  const runs = await runsOf(a.id);
  assert.equal(runs.length, n, 'one run per new subscriber; the existing and the repeated address start none');
  assert.ok(runs.every((r: Json) => r.status === 'completed'));
  const first = runs[0];
  assert.equal(first.email, 'new000@example.com');
  assert.deepEqual(first.data.lists, [welcome]);
  assert.equal(first.data.status, 'active');
  assert.match(first.data.subscriberId, /^sub_/);
  const [msg] = (await pool.query(`SELECT subject FROM messages WHERE to_email = 'new005@example.com'`)).rows;
  assert.equal(msg.subject, 'Welcome New 5');
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM automation_pending_triggers')).rows[0].n, 0);

  // Into another list: the filter does not match. Again into Welcome: only the new address.
  await importCsv('email\nelsewhere@example.com', other);
  await importCsv('email\nnew001@example.com\nlate@example.com', welcome);
  await drain();
  assert.deepEqual((await runsOf(a.id)).length, n + 1);
  assert.equal((await api.get(`/api/v1/automations/${a.id}`)).body.counters.runsStarted, n + 1);
});

test('an import into an account without a subscriber.created automation queues nothing', async () => {
  await pool.query(`UPDATE automations SET status = 'paused' WHERE account_id = $1 AND trigger_event = 'subscriber.created'`, [acme.accountId]);
  const list = await makeList(app, acme.live, { name: 'Quiet' });
  await importCsv('email\nquiet1@example.com\nquiet2@example.com', list);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM automation_pending_triggers')).rows[0].n, 0);
});

test('an import that unsubscribes existing subscribers exits their runs and fires subscriber.unsubscribed, as a PATCH does', async () => {
  const list = await makeList(app, acme.live, { name: 'Drip' });
  await api.post('/api/v1/subscribers', { email: 'stay@example.com', list });
  await api.post('/api/v1/subscribers', { email: 'quit@example.com', list });
  const drip = await makeAutomation(api, { trigger: { event: 'drip.start' }, steps: [{ type: 'wait', duration: '1d' }, { type: 'send', subject: 'Tip', text: 'x', from }] });
  const bye = await makeAutomation(api, { trigger: { event: 'subscriber.unsubscribed' }, steps: [{ type: 'exit' }], reentry: 'always' });
  for (const email of ['stay@example.com', 'quit@example.com']) assert.equal((await trigger('drip.start', email)).statusCode, 202);
  await drain();
  await importCsv('email,status\nquit@example.com,unsubscribed\nstay@example.com,\nbrandnew@example.com,unsubscribed', list);
  const runs = await runsOf(drip.id);
  assert.deepEqual(runs.map((r: Json) => [r.email, r.status]), [['quit@example.com', 'exited'], ['stay@example.com', 'waiting']], 'the exit happens with the import');
  await drain();
  const fired = await runsOf(bye.id);
  assert.deepEqual(fired.map((r: Json) => [r.email, r.data.reason]), [['quit@example.com', 'import']], 'a new subscriber imported as unsubscribed was never subscribed');
  // Importing the same status again changes nothing and fires nothing.
  await importCsv('email,status\nquit@example.com,unsubscribed', list);
  await drain();
  assert.equal((await runsOf(bye.id)).length, 1);
});

async function recordOpen(messageId: string, email: string, data: Record<string, unknown>): Promise<void> {
  await pool.query(
    `INSERT INTO events (id, account_id, message_id, type, email, data, occurred_at) VALUES ($1, $2, $3, 'open', $4, $5, $6)`,
    [`evt_${Math.random().toString(16).slice(2)}`, acme.accountId, messageId, email, JSON.stringify(data), clock.now()],
  );
}

test('machine opens (Apple MPP, Gmail prefetch) neither fire email.opened nor count as the send opened; a person\'s open does', async () => {
  const nurture = await makeAutomation(api, {
    trigger: { event: 'mpp.start' },
    steps: [
      { type: 'send', subject: 'One', html: '<p>One</p>', from },
      { type: 'wait', duration: '1d' },
      { type: 'condition', if: { conditions: [{ field: 'opened', op: 'exists' }] }, then: [{ type: 'exit' }], else: [{ type: 'send', subject: 'Two', text: 'Two', from }] },
    ],
  });
  const onOpen = await makeAutomation(api, { trigger: { event: 'email.opened' }, steps: [{ type: 'exit' }], reentry: 'always' });
  const machineRun = (await trigger('mpp.start', 'apple@example.com')).json().runs[0].id;
  const personRun = (await trigger('mpp.start', 'person@example.com')).json().runs[0].id;
  await drain();
  const [toApple] = (await pool.query(`SELECT id FROM messages WHERE to_email = 'apple@example.com'`)).rows;
  const [toPerson] = (await pool.query(`SELECT id FROM messages WHERE to_email = 'person@example.com'`)).rows;
  // What the tracking code records for Apple's proxy and for Gmail's prefetch: data.machine true.
  await recordOpen(toApple.id, 'apple@example.com', { machine: true, proxy: 'apple', unique: true, userAgent: 'Mozilla/5.0' });
  await recordOpen(toApple.id, 'apple@example.com', { machine: true, proxy: 'google', unique: false });
  await recordOpen(toPerson.id, 'person@example.com', { machine: false, unique: true, userAgent: 'Thunderbird' });
  await drain();
  assert.deepEqual((await runsOf(onOpen.id)).map((r: Json) => r.email), ['person@example.com'], 'only the person\'s open fires email.opened');
  clock.advance(DAY);
  await drain();
  const steps = async (runId: string) => (await api.get(`/api/v1/automations/${nurture.id}/runs/${runId}`)).body.steps.map((s: Json) => `${s.step} ${s.outcome}`);
  assert.deepEqual((await steps(machineRun)).slice(-2), ['steps[2] else', 'steps[2].else[0] sent'], 'a machine open is not an open');
  assert.deepEqual((await steps(personRun)).slice(-2), ['steps[2] then', 'steps[2].then[0] exited']);
  const counters = (await api.get(`/api/v1/automations/${nurture.id}`)).body.counters;
  assert.equal(counters.sends[0].opened, 1);
});

test('a send to a suppressed address is skipped even when the send itself would fail (its template was deleted)', async () => {
  const tpl = await api.post('/api/v1/templates', { name: 'Doomed', subject: 'Hi', html: '<p>Hi</p>' });
  assert.equal(tpl.status, 201);
  const a = await makeAutomation(api, {
    trigger: { event: 'supp.start' },
    steps: [{ type: 'send', templateId: tpl.body.id, from }, { type: 'send', subject: 'Still here', text: 'x', from }],
    reentry: 'always',
  });
  assert.equal((await api.delete(`/api/v1/templates/${tpl.body.id}`)).status, 200);
  await api.post('/api/v1/suppression', { email: 'blocked2@example.com', reason: 'manual' });
  const blocked = (await trigger('supp.start', 'blocked2@example.com')).json().runs[0].id;
  const open = (await trigger('supp.start', 'open2@example.com')).json().runs[0].id;
  await drain();
  const b = (await api.get(`/api/v1/automations/${a.id}/runs/${blocked}`)).body;
  assert.equal(b.status, 'completed');
  assert.deepEqual(b.steps.map((s: Json) => [s.outcome, s.detail.reason]), [['skipped', 'suppressed'], ['skipped', 'suppressed']]);
  // For a mailable address the deleted template still fails the run, with the reason.
  const o = (await api.get(`/api/v1/automations/${a.id}/runs/${open}`)).body;
  assert.equal(o.status, 'failed');
  assert.equal(o.steps[0].detail.reason, 'template_error');
  // Unsubscribed subscriber: skipped likewise, before the template is looked at.
  await api.post('/api/v1/subscribers', { email: 'left2@example.com', status: 'unsubscribed' });
  const left = (await trigger('supp.start', 'left2@example.com')).json().runs[0].id;
  await drain();
  assert.equal((await api.get(`/api/v1/automations/${a.id}/runs/${left}`)).body.status, 'completed');
});

test('a subscriber created by a step wakes a run that entered its wait earlier in the same engine pass', async () => {
  const waiter = await makeAutomation(api, { trigger: { event: 'pass.wait' }, steps: [{ type: 'wait', until: { event: 'subscriber.created', timeout: '1d' } }, { type: 'exit' }] });
  await makeAutomation(api, { trigger: { event: 'pass.create' }, steps: [{ type: 'update_subscriber', attributes: { source: 'automation' } }] });
  assert.equal((await trigger('pass.wait', 'samepass@example.com')).statusCode, 202);
  clock.advance(1); // the waiter is due first, so the engine moves it first in the same pass
  assert.equal((await trigger('pass.create', 'samepass@example.com')).statusCode, 202);
  await drain();
  const [r] = (await pool.query('SELECT status, wait_outcome FROM automation_runs WHERE automation_id = $1', [waiter.id])).rows;
  assert.deepEqual(r, { status: 'exited', wait_outcome: 'event' });
});
