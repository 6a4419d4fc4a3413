import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { makeList } from '../audience/helpers.js';
import { automationAccount, client, makeAutomation, type Json } from './helpers.js';

const { app, pool, config } = await bootApp();
const acme = await createTestAccount(pool);
const { api, templateId, from } = await automationAccount(app, pool, config, acme);
const listId = await makeList(app, acme.live, { name: 'Newsletter' });

const welcome = {
  name: 'Welcome series',
  trigger: { event: 'subscriber.created', filter: { match: 'all', conditions: [{ field: 'list', op: 'eq', value: listId }] } },
  steps: [
    { type: 'send', templateId, from },
    { type: 'wait', duration: '2d' },
    {
      type: 'condition',
      if: { match: 'any', conditions: [{ field: 'opened', op: 'not_exists' }, { field: 'data.plan', op: 'eq', value: 'pro' }] },
      then: [{ type: 'send', subject: 'Still there, {{ subscriber.name | friend }}?', html: '<p>Hello</p>', from }],
      else: [{ type: 'update_subscriber', lists: { add: [listId] }, attributes: { welcomed: true } }, { type: 'exit' }],
    },
    { type: 'wait', until: { event: 'purchase', timeout: '3h' } },
  ],
  reentry: 'never',
};

async function refused(body: Record<string, unknown>): Promise<{ field: string; message: string }[]> {
  const res = await api.post('/api/v1/automations', { name: 'Bad', trigger: { event: 'x' }, steps: [{ type: 'exit' }], ...body });
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.code, 'validation_failed');
  return res.body.errors;
}
const fields = (errors: { field: string }[]) => errors.map((e) => e.field);

test('automations: create returns the definition with zeroed counters, get and list return it', async () => {
  const created = await makeAutomation(api, welcome);
  assert.match(created.id, /^aut_[0-9a-f]{32}$/);
  assert.equal(created.status, 'active');
  assert.equal(created.reentry, 'never');
  assert.deepEqual(created.trigger, welcome.trigger);
  assert.deepEqual(created.steps, welcome.steps.map((s) => (s.type === 'condition' ? { ...s } : s)));
  assert.deepEqual(created.counters, {
    runsStarted: 0, runsCompleted: 0, runsExited: 0, runsFailed: 0, runsInProgress: 0,
    sends: [
      { step: 'steps[0]', sent: 0, skipped: 0, delivered: 0, opened: 0, clicked: 0 },
      { step: 'steps[2].then[0]', sent: 0, skipped: 0, delivered: 0, opened: 0, clicked: 0 },
    ],
  });
  const got = await api.get(`/api/v1/automations/${created.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual({ ...got.body, warnings: [] }, created, "GET is the saved automation without the save's warnings");
  const list = await api.get('/api/v1/automations?limit=500');
  assert.ok(list.body.data.some((a: Json) => a.id === created.id));
});

test('automations: reentry defaults to after_exit and a filter is optional', async () => {
  const a = await makeAutomation(api, { trigger: { event: 'signup' }, steps: [{ type: 'exit' }] });
  assert.equal(a.reentry, 'after_exit');
  assert.equal(a.trigger.filter, null);
});

test('automations: patch pauses and renames; delete removes; unknown ids are 404', async () => {
  const a = await makeAutomation(api, { trigger: { event: 'signup' }, steps: [{ type: 'exit' }] });
  const paused = await api.patch(`/api/v1/automations/${a.id}`, { status: 'paused', name: 'Renamed' });
  assert.equal(paused.status, 200);
  assert.equal(paused.body.status, 'paused');
  assert.equal(paused.body.name, 'Renamed');
  assert.deepEqual(paused.body.steps, a.steps);
  const bad = await api.patch(`/api/v1/automations/${a.id}`, { steps: [{ type: 'wait', duration: '0s' }] });
  assert.equal(bad.status, 422);
  assert.deepEqual(fields(bad.body.errors), ['steps[0].duration']);
  assert.equal((await api.delete(`/api/v1/automations/${a.id}`)).status, 204);
  assert.equal((await api.get(`/api/v1/automations/${a.id}`)).status, 404);
  assert.equal((await api.delete(`/api/v1/automations/${a.id}`)).status, 404);
  assert.equal((await api.patch(`/api/v1/automations/${a.id}`, { status: 'active' })).status, 404);
});

test('automations: 422 names the step path of a missing template deep in a branch', async () => {
  const errors = await refused({
    steps: [
      { type: 'exit' }, { type: 'wait', duration: '1d' },
      { type: 'condition', if: { conditions: [] }, then: [{ type: 'send', templateId: 'tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c31', from }] },
    ],
  });
  assert.deepEqual(fields(errors), ['steps[2].then[0].templateId']);
});

test('automations: unknown step types, empty steps and missing lists are refused with their paths', async () => {
  assert.deepEqual(fields(await refused({ steps: [{ type: 'exit' }, { type: 'sms' }] })), ['steps[1].type']);
  assert.deepEqual(fields(await refused({ steps: [] })), ['steps']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'update_subscriber', lists: { add: [listId, 'lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c99'] } }] })), ['steps[0].lists.add[1]']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'update_subscriber' }] })), ['steps[0]']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'exit', extra: 1 }] })), ['steps[0].extra']);
  assert.deepEqual(fields(await refused({ steps: ['send'] })), ['steps[0]']);
});

test('automations: durations: units s m h d, at most 365 days; bad or over-long ones are refused', async () => {
  for (const ok of ['30s', '15m', '3h', '2d', '365d', '8760h']) {
    await makeAutomation(api, { trigger: { event: 'x' }, steps: [{ type: 'wait', duration: ok }] });
  }
  for (const bad of ['366d', '8761h', '0s', '1w', '1.5h', '-1d', ' 1d', '1d ', 10, '', '9999999999s']) {
    assert.deepEqual(fields(await refused({ steps: [{ type: 'wait', duration: bad }] })), ['steps[0].duration'], String(bad));
  }
  assert.deepEqual(fields(await refused({ steps: [{ type: 'wait', until: { event: 'purchase', timeout: '400d' } }] })), ['steps[0].until.timeout']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'wait', until: { event: '', timeout: '1d' } }] })), ['steps[0].until.event']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'wait', duration: '1d', until: { event: 'p', timeout: '1d' } }] })), ['steps[0]']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'wait' }] })), ['steps[0]']);
});

test('automations: send steps need content, a valid sender on a verified domain and template syntax that parses', async () => {
  assert.deepEqual(fields(await refused({ steps: [{ type: 'send', from }] })), ['steps[0].templateId']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'send', subject: 'Hi', from }] })), ['steps[0].templateId']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'send', templateId }] })), ['steps[0].from.email']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'send', templateId, from: { email: 'hello@unverified.test' } }] })), ['steps[0].from.email']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'send', templateId, from: { email: 'not an address' } }] })), ['steps[0].from.email']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'send', subject: 'Hi {{ name', html: '<p>x</p>', from }] })), ['steps[0].subject']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'send', subject: 'Hi\r\nBcc: x@y.z', html: '<p>x</p>', from }] })), ['steps[0].subject']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'send', subject: 'Hi', html: '[for x in y]', from }] })), ['steps[0].html']);
  assert.deepEqual(fields(await refused({ steps: [{ type: 'send', templateId, from, replyTo: 'nope' }] })), ['steps[0].replyTo']);
});

test('automations: conditions use the segment rule language; bad fields, ops and values are named', async () => {
  const errors = await refused({
    trigger: { event: 'x', filter: { match: 'all', conditions: [{ field: 'colour', op: 'eq', value: 'red' }] } },
    steps: [{
      type: 'condition',
      if: { match: 'all', conditions: [{ field: 'data.total', op: 'like', value: 1 }, { match: 'any', conditions: [{ field: 'opened', op: 'within', value: 3 }] }] },
      then: [{ type: 'condition', if: { conditions: [{ field: 'wait', op: 'eq', value: 'maybe' }] }, then: [{ type: 'nope' }] }],
    }],
  });
  assert.deepEqual(fields(errors).sort(), [
    'steps[0].if.conditions[0].op',
    'steps[0].if.conditions[1].conditions[0].op',
    'steps[0].then[0].if.conditions[0].value',
    'steps[0].then[0].then[0].type',
    'trigger.filter.conditions[0].field',
  ].sort());
});

test('automations: limits: at most 100 steps, conditions 5 deep, names 200 characters, event names', async () => {
  await makeAutomation(api, { trigger: { event: 'x' }, steps: Array.from({ length: 100 }, () => ({ type: 'wait', duration: '1s' })) });
  assert.equal((await api.post('/api/v1/automations', { name: 'A', trigger: { event: 'x' }, steps: Array.from({ length: 101 }, () => ({ type: 'exit' })) })).status, 400 + 22);
  const nest = (depth: number): Json => (depth === 0 ? [{ type: 'exit' }] : [{ type: 'condition', if: { conditions: [] }, then: nest(depth - 1) }]);
  await makeAutomation(api, { trigger: { event: 'x' }, steps: nest(4) });
  assert.deepEqual(fields(await refused({ steps: nest(5) })), ['steps[0].then[0].then[0].then[0].then[0].then']);
  const branchy = [{ type: 'condition', if: { conditions: [] }, then: Array.from({ length: 60 }, () => ({ type: 'exit' })), else: Array.from({ length: 60 }, () => ({ type: 'exit' })) }];
  assert.deepEqual(fields(await refused({ steps: branchy })), ['steps[0].else[39]']);
  assert.equal((await api.post('/api/v1/automations', { name: 'x'.repeat(201), trigger: { event: 'x' }, steps: [{ type: 'exit' }] })).status, 422);
  await makeAutomation(api, { name: 'x'.repeat(200), trigger: { event: 'e'.repeat(100) }, steps: [{ type: 'exit' }] });
  assert.deepEqual(fields(await refused({ trigger: { event: 'e'.repeat(101) } })), ['trigger.event']);
  assert.deepEqual(fields(await refused({ trigger: { event: 'has space' } })), ['trigger.event']);
});

test('automations: hostile input answers 4xx: NUL, lone surrogates, deep JSON, huge arrays', async () => {
  for (const name of ['a\u0000b', 'a\ud800b']) {
    const res = await api.post('/api/v1/automations', { name, trigger: { event: 'x' }, steps: [{ type: 'exit' }] });
    assert.ok(res.status >= 400 && res.status < 500, `${res.status}`);
  }
  let deep: Json = { match: 'all', conditions: [] };
  for (let i = 0; i < 200; i++) deep = { match: 'all', conditions: [deep] };
  const res = await api.post('/api/v1/automations', { name: 'Deep', trigger: { event: 'x', filter: deep }, steps: [{ type: 'exit' }] });
  assert.ok(res.status >= 400 && res.status < 500);
  const many = await api.post('/api/v1/automations', { name: 'Many', trigger: { event: 'x' }, steps: Array.from({ length: 5000 }, () => ({ type: 'exit' })) });
  assert.ok(many.status >= 400 && many.status < 500);
});

test('automations: another account cannot see, change or delete them', async () => {
  const mine = await makeAutomation(api, { trigger: { event: 'x' }, steps: [{ type: 'exit' }] });
  const other = await createTestAccount(pool, 'Other');
  const theirs = client(app, other.live);
  assert.equal((await theirs.get(`/api/v1/automations/${mine.id}`)).status, 404);
  assert.equal((await theirs.patch(`/api/v1/automations/${mine.id}`, { status: 'paused' })).status, 404);
  assert.equal((await theirs.delete(`/api/v1/automations/${mine.id}`)).status, 404);
  assert.deepEqual((await theirs.get('/api/v1/automations')).body.data, []);
  // Their send step cannot use our template.
  const res = await theirs.post('/api/v1/automations', { name: 'x', trigger: { event: 'x' }, steps: [{ type: 'send', templateId, from: { email: 'a@b.test' } }] });
  assert.equal(res.status, 422);
  assert.ok(fields(res.body.errors).includes('steps[0].templateId'));
  assert.equal((await api.get(`/api/v1/automations/${mine.id}`)).body.status, 'active');
});

test('automations: a test key validates like a live key and stores nothing', async () => {
  const sandbox = client(app, acme.test);
  const before = (await pool.query('SELECT count(*)::int AS n FROM automations')).rows[0].n;
  const res = await sandbox.post('/api/v1/automations', welcome);
  assert.equal(res.status, 201);
  assert.equal(res.body.sandbox, true);
  assert.equal((await sandbox.post('/api/v1/automations', { ...welcome, steps: [] })).status, 422);
  const a = await makeAutomation(api, { trigger: { event: 'x' }, steps: [{ type: 'exit' }] });
  assert.equal((await sandbox.patch(`/api/v1/automations/${a.id}`, { status: 'paused' })).body.sandbox, true);
  assert.equal((await sandbox.delete(`/api/v1/automations/${a.id}`)).status, 204);
  assert.equal((await api.get(`/api/v1/automations/${a.id}`)).body.status, 'active');
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM automations')).rows[0].n, before + 1);
});
