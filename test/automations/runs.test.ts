import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { makeList } from '../audience/helpers.js';
import { automationAccount, client, DAY, engineOf, HOUR, makeAutomation, type Json } from './helpers.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock });
const acme = await createTestAccount(pool);
const { api, templateId, from } = await automationAccount(app, pool, config, acme);
const drain = engineOf(pool, config, clock);

const trigger = (event: string, email: string, data?: Record<string, unknown>, headers = acme.live) =>
  app.inject({ method: 'POST', url: '/api/v1/automations/trigger', headers, payload: { event, email, ...(data ? { data } : {}) } });

async function run(automationId: string, runId: string): Promise<Json> {
  const res = await api.get(`/api/v1/automations/${automationId}/runs/${runId}`);
  assert.equal(res.status, 200, res.body && JSON.stringify(res.body));
  return res.body;
}
const messagesTo = async (email: string) => (await pool.query('SELECT * FROM messages WHERE lower(to_email) = lower($1) ORDER BY created_at, id', [email])).rows;
const outcomes = (r: Json) => r.steps.map((s: Json) => `${s.step} ${s.outcome}`);

test('trigger: 202 with the runs started; the run sends, waits 2d on the clock, then sends again', async () => {
  const a = await makeAutomation(api, {
    trigger: { event: 'signup' },
    steps: [
      { type: 'send', templateId, from },
      { type: 'wait', duration: '2d' },
      { type: 'send', subject: 'Day 2 for {{ email }}: {{ data.plan }}', text: 'Plan {{ data.plan }}', from },
    ],
  });
  const res = await trigger('signup', 'ada@example.com', { plan: 'pro' });
  assert.equal(res.statusCode, 202, res.body);
  const body = res.json();
  assert.equal(body.event, 'signup');
  assert.equal(body.email, 'ada@example.com');
  assert.equal(body.runs.length, 1);
  assert.equal(body.runs[0].automationId, a.id);
  const runId = body.runs[0].id;
  assert.match(runId, /^run_[0-9a-f]{32}$/);

  await drain();
  let r = await run(a.id, runId);
  assert.equal(r.status, 'waiting');
  assert.equal(r.position, 'steps[1]');
  assert.equal(r.wakesAt, new Date(clock.now().getTime() + 2 * DAY).toISOString());
  assert.deepEqual(outcomes(r), ['steps[0] sent', 'steps[1] waiting']);
  const first = await messagesTo('ada@example.com');
  assert.equal(first.length, 1);
  assert.equal(first[0].subject, 'Welcome friend');
  assert.match(first[0].html, /Hi pro/);
  assert.equal(r.steps[0].messageId, first[0].id);

  clock.advance(2 * DAY - 1000);
  await drain();
  assert.equal((await run(a.id, runId)).status, 'waiting', 'not before the wait ends');
  clock.advance(1000);
  await drain();
  r = await run(a.id, runId);
  assert.equal(r.status, 'completed');
  assert.equal(r.position, null);
  assert.deepEqual(outcomes(r), ['steps[0] sent', 'steps[1] waiting', 'steps[1] resumed', 'steps[2] sent']);
  const all = await messagesTo('ada@example.com');
  assert.equal(all.length, 2);
  assert.equal(all[1].subject, 'Day 2 for ada@example.com: pro');
  const counters = (await api.get(`/api/v1/automations/${a.id}`)).body.counters;
  assert.equal(counters.runsStarted, 1);
  assert.equal(counters.runsCompleted, 1);
  assert.equal(counters.runsInProgress, 0);
  assert.deepEqual(counters.sends.map((s: Json) => [s.step, s.sent]), [['steps[0]', 1], ['steps[2]', 1]]);
});

test('trigger: no matching automation is an empty list; paused automations start nothing', async () => {
  const res = await trigger('nobody.listens', 'bob@example.com');
  assert.equal(res.statusCode, 202);
  assert.deepEqual(res.json().runs, []);
  const a = await makeAutomation(api, { trigger: { event: 'paused.event' }, status: 'paused', steps: [{ type: 'exit' }] });
  assert.deepEqual((await trigger('paused.event', 'bob@example.com')).json().runs, []);
  assert.equal((await api.get(`/api/v1/automations/${a.id}`)).body.counters.runsStarted, 0);
});

test('abandoned cart: wait until purchase resumes on the event, else reminds after the timeout', async () => {
  const a = await makeAutomation(api, {
    trigger: { event: 'cart.abandoned' },
    steps: [
      { type: 'wait', until: { event: 'purchase', timeout: '1d' } },
      {
        type: 'condition', if: { conditions: [{ field: 'wait', op: 'eq', value: 'timeout' }] },
        then: [{ type: 'send', subject: 'You left {{ data.item }} in your cart', html: '<a href="{{ data.cartUrl }}">Back to cart</a>', from }],
        else: [{ type: 'exit' }],
      },
    ],
    reentry: 'always',
  });
  const buyer = (await trigger('cart.abandoned', 'buyer@example.com', { item: 'socks', cartUrl: 'https://shop.example/c/1' })).json().runs[0].id;
  const idle = (await trigger('cart.abandoned', 'idle@example.com', { item: 'hat', cartUrl: 'https://shop.example/c/2' })).json().runs[0].id;
  await drain();
  assert.equal((await run(a.id, buyer)).waitingFor, 'purchase');

  clock.advance(HOUR);
  const purchase = (await trigger('purchase', 'BUYER@example.com')).json();
  assert.equal(purchase.resumed, 1);
  await drain();
  const b = await run(a.id, buyer);
  assert.equal(b.status, 'exited');
  assert.deepEqual(outcomes(b), ['steps[0] waiting', 'steps[0] resumed', 'steps[1] else', 'steps[1].else[0] exited']);
  assert.equal((await messagesTo('buyer@example.com')).length, 0);
  assert.equal((await run(a.id, idle)).status, 'waiting');

  clock.advance(DAY);
  await drain();
  const i = await run(a.id, idle);
  assert.equal(i.status, 'completed');
  assert.deepEqual(outcomes(i), ['steps[0] waiting', 'steps[0] timed_out', 'steps[1] then', 'steps[1].then[0] sent']);
  const [reminder] = await messagesTo('idle@example.com');
  assert.equal(reminder.subject, 'You left hat in your cart');
  // A purchase after the timeout wakes nothing.
  assert.equal((await trigger('purchase', 'idle@example.com')).json().resumed, 0);
  const counters = (await api.get(`/api/v1/automations/${a.id}`)).body.counters;
  assert.deepEqual([counters.runsStarted, counters.runsCompleted, counters.runsExited], [2, 1, 1]);
});

test('reentry: never starts once per address ever, after_exit not while one is in progress, always every time', async () => {
  const steps = [{ type: 'wait', duration: '1h' }];
  const never = await makeAutomation(api, { trigger: { event: 're.never' }, steps, reentry: 'never' });
  const afterExit = await makeAutomation(api, { trigger: { event: 're.after' }, steps });
  const always = await makeAutomation(api, { trigger: { event: 're.always' }, steps, reentry: 'always' });
  const started = async (event: string) => (await trigger(event, 'cy@example.com')).json().runs.length;
  assert.deepEqual([await started('re.never'), await started('re.never')], [1, 0]);
  assert.deepEqual([await started('re.after'), await started('re.after')], [1, 0]);
  assert.deepEqual([await started('re.always'), await started('re.always')], [1, 1]);
  await drain();
  clock.advance(HOUR);
  await drain();
  assert.deepEqual([await started('re.never'), await started('re.after'), await started('re.always')], [0, 1, 1]);
  assert.equal((await api.get(`/api/v1/automations/${never.id}`)).body.counters.runsStarted, 1);
  assert.equal((await api.get(`/api/v1/automations/${afterExit.id}`)).body.counters.runsStarted, 2);
  assert.equal((await api.get(`/api/v1/automations/${always.id}`)).body.counters.runsStarted, 3);
});

test('reentry never holds under concurrent triggers for one address', async () => {
  await makeAutomation(api, { trigger: { event: 'race' }, steps: [{ type: 'exit' }], reentry: 'never' });
  const results = await Promise.all(Array.from({ length: 8 }, () => trigger('race', 'racer@example.com')));
  assert.equal(results.reduce((n, r) => n + r.json().runs.length, 0), 1);
});

test('trigger filter: the rule language over data and subscriber fields', async () => {
  const listId = await makeList(app, acme.live, { name: 'VIP' });
  await api.post('/api/v1/subscribers', { email: 'vip@example.com', name: 'Vic', list: listId, attributes: { tier: 3 } });
  await makeAutomation(api, {
    trigger: { event: 'order', filter: { match: 'all', conditions: [{ field: 'data.total', op: 'gte', value: 100 }, { match: 'any', conditions: [{ field: 'list', op: 'eq', value: listId }, { field: 'data.coupon', op: 'exists' }] }] } },
    steps: [{ type: 'exit' }], reentry: 'always',
  });
  const started = async (email: string, data: Record<string, unknown>) => (await trigger('order', email, data)).json().runs.length;
  assert.equal(await started('vip@example.com', { total: 150 }), 1);
  assert.equal(await started('vip@example.com', { total: 50 }), 0);
  assert.equal(await started('other@example.com', { total: 150 }), 0);
  assert.equal(await started('other@example.com', { total: '150', coupon: 'X' }), 1);
});

test('conditions branch on subscriber attributes and on the run opening its earlier send', async () => {
  const a = await makeAutomation(api, {
    trigger: { event: 'nurture' },
    steps: [
      { type: 'send', subject: 'One', html: '<p>One <a href="https://acme.test/x">x</a></p>', from },
      { type: 'wait', duration: '1d' },
      {
        type: 'condition', if: { conditions: [{ field: 'opened', op: 'exists' }] },
        then: [{ type: 'update_subscriber', lists: { add: [await makeList(app, acme.live, { name: 'Engaged' })] }, attributes: { engaged: true } }],
        else: [{ type: 'send', subject: 'Two', text: 'Two', from }],
      },
    ],
    reentry: 'always',
  });
  const opener = (await trigger('nurture', 'opener@example.com')).json().runs[0].id;
  const ignorer = (await trigger('nurture', 'ignorer@example.com')).json().runs[0].id;
  await drain();
  const [sent] = await messagesTo('opener@example.com');
  await pool.query(`INSERT INTO events (id, account_id, message_id, type, email, data, occurred_at) VALUES ('evt_o1', $1, $2, 'open', $3, '{"unique": true}', $4)`, [acme.accountId, sent.id, sent.to_email, clock.now()]);
  clock.advance(DAY);
  await drain();
  const o = await run(a.id, opener);
  assert.deepEqual(outcomes(o).slice(-2), ['steps[2] then', 'steps[2].then[0] updated']);
  const sub = (await api.get('/api/v1/subscribers/opener@example.com')).body;
  assert.equal(sub.attributes.engaged, true);
  assert.equal(sub.lists.length, 1);
  const i = await run(a.id, ignorer);
  assert.deepEqual(outcomes(i).slice(-2), ['steps[2] else', 'steps[2].else[0] sent']);
  const counters = (await api.get(`/api/v1/automations/${a.id}`)).body.counters;
  assert.deepEqual(counters.sends.find((s: Json) => s.step === 'steps[0]'), { step: 'steps[0]', sent: 2, skipped: 0, delivered: 0, opened: 1, clicked: 0 });
});

test('sends to suppressed or unsubscribed addresses are skipped and recorded; the run goes on', async () => {
  const a = await makeAutomation(api, { trigger: { event: 'skip' }, steps: [{ type: 'send', templateId, from }, { type: 'send', templateId, from }], reentry: 'always' });
  await api.post('/api/v1/suppression', { email: 'blocked@example.com', reason: 'manual' });
  await api.post('/api/v1/subscribers', { email: 'gone@example.com', status: 'unsubscribed' });
  const blocked = (await trigger('skip', 'blocked@example.com')).json().runs[0].id;
  const gone = (await trigger('skip', 'gone@example.com')).json().runs[0].id;
  await drain();
  const b = await run(a.id, blocked);
  assert.equal(b.status, 'completed');
  assert.deepEqual(b.steps.map((s: Json) => [s.outcome, s.detail.reason]), [['skipped', 'suppressed'], ['skipped', 'suppressed']]);
  assert.deepEqual((await run(a.id, gone)).steps.map((s: Json) => s.detail.reason), ['subscriber unsubscribed', 'subscriber unsubscribed']);
  assert.equal((await messagesTo('blocked@example.com')).length + (await messagesTo('gone@example.com')).length, 0);
  assert.equal((await api.get(`/api/v1/automations/${a.id}`)).body.counters.sends[0].skipped, 2);
});

test('an unsubscribe exits the runs of that address, and only those', async () => {
  const a = await makeAutomation(api, { trigger: { event: 'drip' }, steps: [{ type: 'wait', duration: '1d' }, { type: 'send', templateId, from }], reentry: 'always' });
  const leaving = (await trigger('drip', 'leaving@example.com')).json().runs[0].id;
  const staying = (await trigger('drip', 'staying@example.com')).json().runs[0].id;
  await drain();
  assert.equal((await api.post('/api/v1/suppression', { email: 'Leaving@Example.com', reason: 'unsubscribe' })).status < 300, true);
  const l = await run(a.id, leaving);
  assert.equal(l.status, 'exited');
  assert.equal(l.exitReason, 'unsubscribed');
  assert.equal(l.steps.at(-1).outcome, 'exited');
  clock.advance(DAY);
  await drain();
  assert.equal((await run(a.id, staying)).status, 'completed');
  assert.equal((await messagesTo('leaving@example.com')).length, 0);
  assert.equal((await api.get(`/api/v1/automations/${a.id}`)).body.counters.runsExited, 1);
});

test('pausing keeps waiting runs waiting past their wake-up; resuming goes on', async () => {
  const a = await makeAutomation(api, { trigger: { event: 'pause.me' }, steps: [{ type: 'wait', duration: '1h' }, { type: 'exit' }] });
  const id = (await trigger('pause.me', 'pat@example.com')).json().runs[0].id;
  await drain();
  await api.patch(`/api/v1/automations/${a.id}`, { status: 'paused' });
  clock.advance(2 * HOUR);
  await drain();
  assert.equal((await run(a.id, id)).status, 'waiting');
  await api.patch(`/api/v1/automations/${a.id}`, { status: 'active' });
  await drain();
  assert.equal((await run(a.id, id)).status, 'exited');
});

test('runs: list filtered by status, paginated; cancel ends a run once; 404 for unknown ids', async () => {
  const a = await makeAutomation(api, { trigger: { event: 'listed' }, steps: [{ type: 'wait', duration: '1d' }], reentry: 'always' });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await trigger('listed', `l${i}@example.com`)).json().runs[0].id);
  await drain();
  const cancelled = await api.post(`/api/v1/automations/${a.id}/runs/${ids[0]}/cancel`, {});
  assert.equal(cancelled.status, 200);
  assert.equal(cancelled.body.status, 'exited');
  assert.equal(cancelled.body.exitReason, 'cancelled');
  assert.equal((await api.post(`/api/v1/automations/${a.id}/runs/${ids[0]}/cancel`, {})).status, 409);
  const waiting = await api.get(`/api/v1/automations/${a.id}/runs?status=waiting&limit=1`);
  assert.equal(waiting.body.data.length, 1);
  assert.ok(waiting.body.nextCursor);
  const page2 = await api.get(`/api/v1/automations/${a.id}/runs?status=waiting&limit=1&cursor=${waiting.body.nextCursor}`);
  assert.deepEqual([waiting.body.data[0].id, page2.body.data[0].id].sort(), ids.slice(1).sort());
  assert.equal(page2.body.nextCursor, null);
  assert.deepEqual((await api.get(`/api/v1/automations/${a.id}/runs?status=exited`)).body.data.map((r: Json) => r.id), [ids[0]]);
  assert.equal((await api.get(`/api/v1/automations/${a.id}/runs?status=bogus`)).status, 422);
  assert.equal((await api.get(`/api/v1/automations/${a.id}/runs/run_019a6f0c3b2e7d1a9c4b5e6f7a8b9c00`)).status, 404);
  assert.equal((await api.get('/api/v1/automations/aut_019a6f0c3b2e7d1a9c4b5e6f7a8b9c00/runs')).status, 404);
  clock.advance(DAY);
  await drain();
  assert.equal((await api.get(`/api/v1/automations/${a.id}`)).body.counters.runsExited, 1);
  assert.equal((await api.get(`/api/v1/automations/${a.id}`)).body.counters.runsCompleted, 2);
});

test('test key: the live answer (202 {event, email, runs, resumed}) plus sandbox: true; nothing started, woken or recorded', async () => {
  const always = await makeAutomation(api, { trigger: { event: 'sbx' }, steps: [{ type: 'exit' }], reentry: 'always' });
  const filtered = await makeAutomation(api, { trigger: { event: 'sbx', filter: { conditions: [{ field: 'data.x', op: 'eq', value: 1 }] } }, steps: [{ type: 'exit' }] });
  const waiting = await makeAutomation(api, { trigger: { event: 'sbx.start' }, steps: [{ type: 'wait', until: { event: 'sbx', timeout: '1d' } }, { type: 'exit' }] });
  assert.equal((await trigger('sbx.start', 'sandy@example.com')).statusCode, 202);
  await drain();
  const state = async () => (await pool.query(
    `SELECT (SELECT count(*)::int FROM automation_runs) AS runs, (SELECT count(*)::int FROM automation_run_steps) AS steps,
            (SELECT count(*)::int FROM automation_runs WHERE status = 'waiting') AS waiting`,
  )).rows[0];
  const before = await state();
  assert.equal(before.waiting, 1);

  const res = await trigger('sbx', 'sandy@example.com', { x: 1 }, acme.test);
  assert.equal(res.statusCode, 202, res.body);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['email', 'event', 'resumed', 'runs', 'sandbox']);
  assert.deepEqual([body.sandbox, body.event, body.email, body.resumed], [true, 'sbx', 'sandy@example.com', 1]);
  assert.deepEqual(body.runs.map((r: Json) => r.automationId).sort(), [always.id, filtered.id].sort());
  for (const r of body.runs) {
    assert.match(r.id, /^run_[0-9a-f]{32}$/);
    assert.equal((await api.get(`/api/v1/automations/${r.automationId}/runs/${r.id}`)).status, 404, 'a sandbox run exists nowhere');
  }
  // A filter that does not match: the same as live, no run of it.
  const unmatched = (await trigger('sbx', 'sandy@example.com', { x: 2 }, acme.test)).json();
  assert.deepEqual(unmatched.runs.map((r: Json) => r.automationId), [always.id]);
  assert.equal((await trigger('sbx', 'not an address', undefined, acme.test)).statusCode, 422);
  await drain();
  assert.deepEqual(await state(), before);
  assert.equal((await api.get(`/api/v1/automations/${waiting.id}/runs?status=waiting`)).body.data.length, 1);

  // The live key's answer to the same trigger: same status and fields, without sandbox.
  const live = await trigger('sbx', 'sandy@example.com', { x: 1 });
  assert.equal(live.statusCode, 202);
  assert.deepEqual(Object.keys(live.json()).sort(), ['email', 'event', 'resumed', 'runs']);
  assert.equal(live.json().resumed, 1);
});

test('Idempotency-Key: the same trigger twice answers the first runs and starts nothing more', async () => {
  await makeAutomation(api, { trigger: { event: 'idem' }, steps: [{ type: 'exit' }], reentry: 'always' });
  const send = () => app.inject({ method: 'POST', url: '/api/v1/automations/trigger', headers: { ...acme.live, 'idempotency-key': 'trigger-1' }, payload: { event: 'idem', email: 'idem@example.com' } });
  const first = await send();
  const second = await send();
  assert.equal(second.statusCode, 202);
  assert.equal(second.headers['idempotent-replayed'], 'true');
  assert.deepEqual(second.json(), first.json());
  const other = await app.inject({ method: 'POST', url: '/api/v1/automations/trigger', headers: { ...acme.live, 'idempotency-key': 'trigger-1' }, payload: { event: 'idem', email: 'other@example.com' } });
  assert.equal(other.statusCode, 409);
  assert.equal((await pool.query(`SELECT count(*)::int AS n FROM automation_runs WHERE email = 'idem@example.com'`)).rows[0].n, 1);
});

test('trigger input: bad event names, addresses and data are 422; hostile strings are 4xx', async () => {
  for (const [event, email, data] of [
    ['has space', 'a@example.com', undefined], ['', 'a@example.com', undefined], ['ok', 'nope', undefined], ['ok', 'a@example.com', { big: 'x'.repeat(33 * 1024) }],
    ['ok', 'a@example.com', { k: 'a\u0000b' }], ['ok\u0000', 'a@example.com', undefined], ['ok', 'a@example.com', { k: 'lone \ud800' }],
  ] as const) {
    const res = await trigger(event, email, data as Record<string, unknown> | undefined);
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(event)} ${email}: ${res.statusCode}`);
  }
  const arr = await app.inject({ method: 'POST', url: '/api/v1/automations/trigger', headers: acme.live, payload: { event: 'ok', email: 'a@example.com', data: [1, 2] } });
  assert.equal(arr.statusCode, 422);
});

test("runs routes: another account's automation and run ids are not found", async () => {
  const a = await makeAutomation(api, { trigger: { event: 'mine' }, steps: [{ type: 'wait', duration: '1d' }] });
  const id = (await trigger('mine', 'mine@example.com')).json().runs[0].id;
  const other = client(app, (await createTestAccount(pool, 'Other')).live);
  assert.equal((await other.get(`/api/v1/automations/${a.id}/runs`)).status, 404);
  assert.equal((await other.get(`/api/v1/automations/${a.id}/runs/${id}`)).status, 404);
  assert.equal((await other.post(`/api/v1/automations/${a.id}/runs/${id}/cancel`, {})).status, 404);
  // Their trigger of the same event starts nothing here.
  const theirs = await app.inject({ method: 'POST', url: '/api/v1/automations/trigger', headers: (await createTestAccount(pool, 'Third')).live, payload: { event: 'mine', email: 'mine@example.com' } });
  assert.deepEqual(theirs.json().runs, []);
  await drain();
  assert.equal((await run(a.id, id)).status, 'waiting');
});
