import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { runCampaignStep } from '../../src/domain/campaigns/runner.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { api, campaignBody, seedList } from './helpers.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock });
const acme = await createTestAccount(pool, 'Acme');
const other = await createTestAccount(pool, 'Other');
await createVerifiedDomain(pool, acme.accountId, 'acme.test', config.secret);
await createVerifiedDomain(pool, other.accountId, 'other.test', config.secret);
const live = api(app, acme.live);
const sandbox = api(app, acme.test);
const listId = await seedList(app, pool, acme.live, acme.accountId, { count: 3, domain: 'example.net' });
const otherList = await seedList(app, pool, other.live, other.accountId, { count: 1, domain: 'example.org' });
const runner = () => runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => null });

async function draft(over: Record<string, unknown> = {}) {
  const r = await live.post('/api/v1/campaigns', campaignBody(listId, over));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

test('create: 201 with a draft that GET shows with its report', async () => {
  const c = await draft({ tags: ['news'], throttle: 600 });
  assert.match(c.id, /^cmp_[0-9a-f]{32}$/);
  assert.equal(c.status, 'draft');
  assert.deepEqual(c.audience, { lists: [listId], segment: null, excludeLists: [] });
  const got = await live.get(`/api/v1/campaigns/${c.id}`);
  assert.equal(got.status, 200);
  assert.equal(got.body.name, 'November news');
  assert.equal(got.body.progress.recipients, 0);
  assert.equal(got.body.counts.sent, 0);
  assert.deepEqual(got.body.counts.skipped, { suppressed: 0, unsubscribed: 0, bounced: 0, complained: 0, duplicate: 0 });
  assert.equal(got.body.rates.open, 0);
});

test('create: validation as for POST /emails, with per-field errors', async () => {
  const cases: [Record<string, unknown>, number, string, string?][] = [
    [{ audience: { lists: [] } }, 422, 'validation_failed'],
    [{ audience: { lists: ['lst_0000000000000000000000000000000a'] } }, 422, 'validation_failed', 'audience.lists'],
    [{ audience: { lists: [otherList] } }, 422, 'validation_failed', 'audience.lists'],
    [{ audience: { lists: [listId], excludeLists: [otherList] } }, 422, 'validation_failed', 'audience.excludeLists'],
    [{ audience: { lists: [listId], segment: 'seg_0000000000000000000000000000000a' } }, 422, 'validation_failed', 'audience.segment'],
    [{ from: { email: 'news@unverified.test' } }, 422, 'sender_domain_unverified', 'from.email'],
    [{ from: { email: 'news@other.test' } }, 422, 'sender_domain_unverified', 'from.email'],
    [{ subject: 'Hi\r\nBcc: x@evil.test' }, 422, 'validation_failed', 'subject'],
    [{ html: '<p>{{ unclosed </p>' }, 422, 'template_error'],
    [{ html: undefined, templateId: 'tpl_0000000000000000000000000000000a' }, 422, 'template_error', 'templateId'],
    [{ html: undefined }, 422, 'validation_failed', 'html'],
    [{ headers: { 'X-Bad': 'a\r\nb' } }, 422, 'validation_failed'],
    [{ headers: { 'Message-ID': '<x@y>' } }, 422, 'validation_failed'],
    [{ replyTo: 'not an address' }, 422, 'validation_failed', 'replyTo'],
    [{ throttle: 0 }, 422, 'validation_failed'],
    [{ throttle: 100_001 }, 422, 'validation_failed'],
    [{ scheduledAt: '2028-01-01T00:00:00.000Z' }, 422, 'validation_failed', 'scheduledAt'],
    [{ name: '' }, 422, 'validation_failed'],
    [{ name: 'x'.repeat(201) }, 422, 'validation_failed'],
    [{ unknownField: 1 }, 422, 'validation_failed'],
  ];
  for (const [over, status, code, field] of cases) {
    const r = await live.post('/api/v1/campaigns', campaignBody(listId, over));
    assert.equal(r.status, status, `${JSON.stringify(over)} → ${JSON.stringify(r.body)}`);
    assert.equal(r.body.code, code, JSON.stringify(over));
    if (field) assert.ok(r.body.errors.some((e: { field: string }) => e.field === field), `${field} named: ${JSON.stringify(r.body)}`);
  }
});

test('limits: throttle 100000 and name of 200 characters are accepted; 50 lists accepted, 51 refused', async () => {
  await draft({ throttle: 100_000, name: 'x'.repeat(200) });
  const many = Array.from({ length: 50 }, () => listId);
  await draft({ audience: { lists: many } });
  const r = await live.post('/api/v1/campaigns', campaignBody(listId, { audience: { lists: [...many, listId] } }));
  assert.equal(r.status, 422);
});

test('hostile input: NUL, lone surrogates, deep JSON and huge bodies answer 4xx', async () => {
  for (const name of ['a\u0000b', 'a\ud800b']) {
    const r = await live.post('/api/v1/campaigns', campaignBody(listId, { name }));
    assert.ok(r.status >= 400 && r.status < 500, `${JSON.stringify(name)} → ${r.status}`);
  }
  let deep: unknown = 'x';
  for (let i = 0; i < 200; i++) deep = { d: deep };
  const r = await live.post('/api/v1/campaigns', campaignBody(listId, { variables: { deep } }));
  assert.ok(r.status < 500, `deep JSON is never a 500 (${r.status})`);
  const huge = await live.post('/api/v1/campaigns', campaignBody(listId, { html: 'x'.repeat(3 * 1024 * 1024) }));
  assert.equal(huge.status, 422);
});

test("another account's campaign is not found on every route", async () => {
  const c = await draft();
  const them = api(app, other.live);
  assert.equal((await them.get(`/api/v1/campaigns/${c.id}`)).status, 404);
  assert.equal((await them.patch(`/api/v1/campaigns/${c.id}`, { name: 'x' })).status, 404);
  assert.equal((await them.delete(`/api/v1/campaigns/${c.id}`)).status, 404);
  for (const action of ['send', 'pause', 'resume', 'cancel']) assert.equal((await them.post(`/api/v1/campaigns/${c.id}/${action}`)).status, 404, action);
  assert.equal((await them.post(`/api/v1/campaigns/${c.id}/test`, { to: ['a@example.org'] })).status, 404);
  assert.equal((await them.get(`/api/v1/campaigns/${c.id}/recipients`)).status, 404);
  assert.equal((await live.get('/api/v1/campaigns/not-an-id')).status, 404);
});

test('test key: same validation, sandbox: true, nothing stored or queued', async () => {
  const bad = await sandbox.post('/api/v1/campaigns', campaignBody(listId, { from: { email: 'x@unverified.test' } }));
  assert.equal(bad.status, 422);
  assert.equal(bad.body.code, 'sender_domain_unverified');
  const before = (await pool.query('SELECT count(*)::int AS n FROM campaigns')).rows[0].n;
  const r = await sandbox.post('/api/v1/campaigns', campaignBody(listId));
  assert.equal(r.status, 201);
  assert.equal(r.body.sandbox, true);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM campaigns')).rows[0].n, before, 'nothing stored');

  const c = await draft();
  const sent = await sandbox.post(`/api/v1/campaigns/${c.id}/send`);
  assert.equal(sent.status, 202);
  assert.deepEqual(sent.body, { id: c.id, status: 'sending', sandbox: true });
  assert.equal((await live.get(`/api/v1/campaigns/${c.id}`)).body.status, 'draft', 'still a draft');
  await runner();
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1', [c.id])).rows[0].n, 0, 'nothing queued');
  const del = await app.inject({ method: 'DELETE', url: `/api/v1/campaigns/${c.id}`, headers: acme.test });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.equal((await live.get(`/api/v1/campaigns/${c.id}`)).status, 200, 'not deleted');
  const testSend = await sandbox.post(`/api/v1/campaigns/${c.id}/test`, { to: ['me@example.net'] });
  assert.equal(testSend.status, 200);
  assert.equal(testSend.body.sandbox, true);
  assert.equal(testSend.body.data[0].sandbox, true);
});

test('states: PATCH and DELETE only while draft or scheduled; send twice is invalid_state naming the state', async () => {
  const c = await draft();
  const patched = await live.patch(`/api/v1/campaigns/${c.id}`, { name: 'Renamed', throttle: 120 });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.name, 'Renamed');
  assert.equal(patched.body.throttle, 120);
  const badPatch = await live.patch(`/api/v1/campaigns/${c.id}`, { audience: { lists: [otherList] } });
  assert.equal(badPatch.status, 422);

  const sent = await live.post(`/api/v1/campaigns/${c.id}/send`);
  assert.equal(sent.status, 202);
  assert.deepEqual(sent.body, { id: c.id, status: 'sending' });
  for (const [method, url, body] of [
    ['PATCH', `/api/v1/campaigns/${c.id}`, { name: 'x' }],
    ['DELETE', `/api/v1/campaigns/${c.id}`, undefined],
    ['POST', `/api/v1/campaigns/${c.id}/send`, {}],
    ['POST', `/api/v1/campaigns/${c.id}/resume`, {}],
  ] as const) {
    const r = await app.inject({ method, url, headers: acme.live, ...(body ? { payload: body } : {}) });
    assert.equal(r.statusCode, 409, `${method} ${url}`);
    assert.equal(r.json().code, 'invalid_state');
    assert.equal(r.json().state, 'sending');
  }
  assert.deepEqual((await live.post(`/api/v1/campaigns/${c.id}/pause`)).body, { id: c.id, status: 'paused' });
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/pause`)).status, 409);
  assert.deepEqual((await live.post(`/api/v1/campaigns/${c.id}/resume`)).body, { id: c.id, status: 'sending' });
  assert.deepEqual((await live.post(`/api/v1/campaigns/${c.id}/cancel`)).body, { id: c.id, status: 'cancelled' });
  const again = await live.post(`/api/v1/campaigns/${c.id}/cancel`);
  assert.equal(again.status, 409);
  assert.equal(again.body.state, 'cancelled');
});

test('draft transitions: pause and resume of a draft are invalid; cancel of a draft works; delete of a draft works', async () => {
  const c = await draft();
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/pause`)).body.state, 'draft');
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/resume`)).body.state, 'draft');
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/cancel`)).body.status, 'cancelled');
  const d = await draft();
  assert.equal((await live.delete(`/api/v1/campaigns/${d.id}`)).status, 204);
  assert.equal((await live.get(`/api/v1/campaigns/${d.id}`)).status, 404);
});

test('sending twice concurrently: exactly one 202, one set of messages', async () => {
  const c = await draft();
  const results = await Promise.all(Array.from({ length: 5 }, () => live.post(`/api/v1/campaigns/${c.id}/send`)));
  assert.deepEqual(results.map((r) => r.status).sort(), [202, 409, 409, 409, 409]);
  await runner();
  await runner();
  const { rows } = await pool.query('SELECT count(*)::int AS n, count(DISTINCT subscriber_id)::int AS d FROM messages WHERE campaign_id = $1', [c.id]);
  assert.deepEqual(rows[0], { n: 3, d: 3 });
});

test('scheduled: send with a future scheduledAt answers scheduled; it starts at that time on the injectable clock', async () => {
  const at = new Date(clock.now().getTime() + 3_600_000).toISOString();
  const c = await draft({ scheduledAt: at });
  const sent = await live.post(`/api/v1/campaigns/${c.id}/send`);
  assert.deepEqual(sent.body, { id: c.id, status: 'scheduled' });
  assert.equal((await live.patch(`/api/v1/campaigns/${c.id}`, { name: 'still editable' })).status, 200);
  await runner();
  assert.equal((await live.get(`/api/v1/campaigns/${c.id}`)).body.status, 'scheduled');
  clock.advance(3_600_000);
  await runner();
  const got = (await live.get(`/api/v1/campaigns/${c.id}`)).body;
  assert.equal(got.status, 'sending');
  assert.equal(got.progress.queued, 3);
  assert.equal(got.progress.startedAt, clock.now().toISOString());
});

test('list: filter by status, keyset pages, no bodies', async () => {
  const all = await live.get('/api/v1/campaigns?limit=2');
  assert.equal(all.status, 200);
  assert.equal(all.body.data.length, 2);
  assert.ok(all.body.nextCursor);
  assert.equal(all.body.data[0].html, null);
  const next = await live.get(`/api/v1/campaigns?limit=2&cursor=${all.body.nextCursor}`);
  assert.ok(next.body.data.every((c: { id: string }) => c.id < all.body.data[1].id));
  const cancelled = await live.get('/api/v1/campaigns?status=cancelled&limit=500');
  assert.ok(cancelled.body.data.length >= 2);
  assert.ok(cancelled.body.data.every((c: { status: string }) => c.status === 'cancelled'));
  assert.equal((await live.get('/api/v1/campaigns?status=bogus')).status, 422);
  assert.equal((await live.get('/api/v1/campaigns?limit=501')).status, 422);
  assert.equal((await live.get('/api/v1/campaigns?limit=500')).status, 200);
});
