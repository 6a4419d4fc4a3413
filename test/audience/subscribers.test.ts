import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { applySuppressionToSubscribers, reactivateSubscribers } from '../../src/domain/audience/subscribers.js';
import { allPages, client, makeList, makeSubscriber } from './helpers.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);
const api = client(app, acme.live);

test('subscribers: create answers 201 with id sub_, status active and the given fields', async () => {
  const list = await makeList(app, acme.live);
  const res = await api.post('/api/v1/subscribers', { email: 'Ada@Example.com', name: 'Ada', list, attributes: { plan: 'pro', seats: 3 } });
  assert.equal(res.status, 201);
  assert.match(res.body.id, /^sub_[0-9a-f]{32}$/);
  assert.equal(res.body.email, 'Ada@Example.com', 'stored as given');
  assert.equal(res.body.name, 'Ada');
  assert.equal(res.body.status, 'active');
  assert.deepEqual(res.body.attributes, { plan: 'pro', seats: 3 });
  assert.deepEqual(res.body.lists, [list]);
  assert.match(res.body.createdAt, /\.\d{3}Z$/);
});

test('subscribers: posting an existing email (any case) updates it and adds the list with 200', async () => {
  const a = await makeList(app, acme.live, { name: 'A' });
  const b = await makeList(app, acme.live, { name: 'B' });
  const first = await api.post('/api/v1/subscribers', { email: 'upsert@example.com', name: 'First', list: a, attributes: { plan: 'free', city: 'Oslo' } });
  assert.equal(first.status, 201);
  const second = await api.post('/api/v1/subscribers', { email: 'UPSERT@example.COM', list: b, attributes: { plan: 'pro', city: null } });
  assert.equal(second.status, 200);
  assert.equal(second.body.id, first.body.id, 'same subscriber');
  assert.equal(second.body.email, 'upsert@example.com', 'address kept as first given');
  assert.equal(second.body.name, 'First', 'absent name is kept');
  assert.deepEqual(second.body.attributes, { plan: 'pro' }, 'attributes merged; null removes a key');
  assert.deepEqual([...second.body.lists].sort(), [a, b].sort());
  const third = await api.post('/api/v1/subscribers', { email: 'upsert@example.com', name: 'Renamed', status: 'unsubscribed' });
  assert.equal(third.status, 200);
  assert.equal(third.body.name, 'Renamed');
  assert.equal(third.body.status, 'unsubscribed');
});

test('subscribers: email is required and must be a bare address', async () => {
  const missing = await api.post('/api/v1/subscribers', { name: 'x' });
  assert.equal(missing.status, 422);
  assert.equal(missing.body.errors[0].field, 'email');
  for (const email of ['not-an-email', 'a@b', 'Bob <bob@example.com>', '']) {
    const res = await api.post('/api/v1/subscribers', { email });
    assert.equal(res.status, 422, email);
    assert.equal(res.body.errors[0].field, 'email');
  }
});

test('subscribers: an unknown list, or a status set only by the system, is 422', async () => {
  const res = await api.post('/api/v1/subscribers', { email: 'nolist@example.com', list: 'lst_00000000000000000000000000000000' });
  assert.equal(res.status, 422);
  assert.equal(res.body.errors[0].field, 'list');
  assert.match(res.body.detail, /unknown list/);
  const bounced = await api.post('/api/v1/subscribers', { email: 'nolist@example.com', status: 'bounced' });
  assert.equal(bounced.status, 422);
  assert.equal(bounced.body.errors[0].field, 'status');
  assert.equal((await api.get('/api/v1/subscribers/nolist@example.com')).status, 404, 'nothing stored');
});

test('subscribers: attributes must be an object within the limits', async () => {
  assert.equal((await api.post('/api/v1/subscribers', { email: 'attr@example.com', attributes: [1, 2] })).status, 422);
  const big = await api.post('/api/v1/subscribers', { email: 'attr@example.com', attributes: { blob: 'x'.repeat(17 * 1024) } });
  assert.equal(big.status, 422);
  assert.equal(big.body.errors[0].field, 'attributes');
  const name = await api.post('/api/v1/subscribers', { email: 'attr@example.com', name: 'n'.repeat(201) });
  assert.equal(name.status, 422);
});

test('subscribers: get by id or by email in any case; unknown is 404', async () => {
  const sub = await makeSubscriber(app, acme.live, { email: 'Find.Me@Example.com' });
  assert.equal((await api.get(`/api/v1/subscribers/${sub.id}`)).body.email, 'Find.Me@Example.com');
  assert.equal((await api.get(`/api/v1/subscribers/${encodeURIComponent('find.me@example.COM')}`)).body.id, sub.id);
  assert.equal((await api.get('/api/v1/subscribers/nobody@example.com')).status, 404);
  assert.equal((await api.get('/api/v1/subscribers/sub_00000000000000000000000000000000')).status, 404);
  assert.equal((await api.get('/api/v1/subscribers/garbage')).status, 404);
});

test('subscribers: patch changes the given fields and adds and removes lists', async () => {
  const a = await makeList(app, acme.live, { name: 'PA' });
  const b = await makeList(app, acme.live, { name: 'PB' });
  const sub = await makeSubscriber(app, acme.live, { email: 'patch@example.com', name: 'P', list: a, attributes: { x: 1, y: 2 } });
  const res = await api.patch(`/api/v1/subscribers/${sub.id}`, { name: null, attributes: { y: null, z: 'new' }, addLists: [b], removeLists: [a] });
  assert.equal(res.status, 200);
  assert.equal(res.body.name, null);
  assert.deepEqual(res.body.attributes, { x: 1, z: 'new' });
  assert.deepEqual(res.body.lists, [b]);
  const byEmail = await api.patch('/api/v1/subscribers/PATCH@example.com', { email: 'patched@example.com', status: 'unsubscribed', list: a });
  assert.equal(byEmail.status, 200);
  assert.equal(byEmail.body.email, 'patched@example.com');
  assert.equal(byEmail.body.status, 'unsubscribed');
  assert.deepEqual([...byEmail.body.lists].sort(), [a, b].sort());
  assert.equal((await api.get('/api/v1/subscribers/patch@example.com')).status, 404);
});

test('subscribers: patching to an address another subscriber has is 409 conflict', async () => {
  await makeSubscriber(app, acme.live, { email: 'taken@example.com' });
  const sub = await makeSubscriber(app, acme.live, { email: 'mover@example.com' });
  const res = await api.patch(`/api/v1/subscribers/${sub.id}`, { email: 'TAKEN@example.com' });
  assert.equal(res.status, 409);
  assert.equal(res.body.code, 'conflict');
});

test('subscribers: patch validates like create and 404s an unknown subscriber', async () => {
  const sub = await makeSubscriber(app, acme.live, { email: 'patchval@example.com' });
  assert.equal((await api.patch(`/api/v1/subscribers/${sub.id}`, { email: 'nope' })).status, 422);
  assert.equal((await api.patch(`/api/v1/subscribers/${sub.id}`, { removeLists: ['lst_00000000000000000000000000000000'] })).status, 422);
  assert.equal((await api.patch(`/api/v1/subscribers/${sub.id}`, { status: 'complained' })).status, 422);
  assert.equal((await api.patch(`/api/v1/subscribers/${sub.id}`, { colour: 'red' })).status, 422);
  assert.equal((await api.patch('/api/v1/subscribers/ghost@example.com', { name: 'x' })).status, 404);
});

test('subscribers: delete answers 204, then the subscriber is gone and the list count drops', async () => {
  const list = await makeList(app, acme.live);
  const sub = await makeSubscriber(app, acme.live, { email: 'delete@example.com', list });
  assert.equal((await api.delete('/api/v1/subscribers/delete@example.com')).status, 204);
  assert.equal((await api.get(`/api/v1/subscribers/${sub.id}`)).status, 404);
  assert.equal((await api.delete(`/api/v1/subscribers/${sub.id}`)).status, 404);
  assert.equal((await api.get(`/api/v1/lists/${list}`)).body.subscriberCount, 0);
});

test('subscribers: list filters by list, status and q (email or name contains, % is literal)', async () => {
  const acct = await createTestAccount(pool, 'Filters');
  const list = await makeList(app, acct.live);
  await makeSubscriber(app, acct.live, { email: 'alice@shop.example', name: 'Alice Smith', list });
  await makeSubscriber(app, acct.live, { email: 'bob@shop.example', name: 'Bob', status: 'unsubscribed', list });
  await makeSubscriber(app, acct.live, { email: 'carol@other.example', name: '100% Carol' });
  const emails = async (qs: string) => (await allPages(app, acct.live, `/api/v1/subscribers?${qs}`)).map((s) => s.email).sort();
  assert.deepEqual(await emails(`list=${list}`), ['alice@shop.example', 'bob@shop.example']);
  assert.deepEqual(await emails('status=unsubscribed'), ['bob@shop.example']);
  assert.deepEqual(await emails(`list=${list}&status=active`), ['alice@shop.example']);
  assert.deepEqual(await emails('q=SHOP'), ['alice@shop.example', 'bob@shop.example']);
  assert.deepEqual(await emails('q=smith'), ['alice@shop.example']);
  assert.deepEqual(await emails('q=%25'), ['carol@other.example']);
  assert.deepEqual(await emails('q=_'), []);
  assert.equal((await client(app, acct.live).get('/api/v1/subscribers?status=gone')).status, 422);
});

test('subscribers: limit defaults to 50, accepts 1 and 500, refuses 0 and 501; a forged cursor is 422', async () => {
  const acct = await createTestAccount(pool, 'Limits');
  for (let i = 0; i < 55; i++) await makeSubscriber(app, acct.live, { email: `l${i}@example.com` });
  const c = client(app, acct.live);
  const def = await c.get('/api/v1/subscribers');
  assert.equal(def.body.data.length, 50);
  assert.ok(def.body.nextCursor);
  assert.equal((await c.get('/api/v1/subscribers?limit=1')).body.data.length, 1);
  const max = await c.get('/api/v1/subscribers?limit=500');
  assert.equal(max.body.data.length, 55);
  assert.equal(max.body.nextCursor, null);
  assert.equal((await c.get('/api/v1/subscribers?limit=0')).status, 422);
  assert.equal((await c.get('/api/v1/subscribers?limit=501')).status, 422);
  assert.equal((await c.get('/api/v1/subscribers?cursor=bm9wZQ')).status, 422);
  assert.equal((await c.get('/api/v1/subscribers?order=sideways')).status, 422);
});

test('subscribers: a suppressed address gets the matching status when created or upserted', async () => {
  const cases = [['unsubscribe', 'unsubscribed'], ['complaint', 'complained'], ['hard_bounce', 'bounced']] as const;
  for (const [reason, status] of cases) {
    const email = `supp-${reason}@example.com`;
    const s = await api.post('/api/v1/suppression', { email, reason });
    assert.ok(s.status < 300, JSON.stringify(s.body));
    const created = await api.post('/api/v1/subscribers', { email: email.toUpperCase(), status: 'active' });
    assert.equal(created.status, 201);
    assert.equal(created.body.status, status, reason);
  }
  await api.post('/api/v1/suppression', { email: 'manual@example.com', reason: 'manual' });
  assert.equal((await makeSubscriber(app, acme.live, { email: 'manual@example.com' })).status, 'active', 'manual suppression imposes no status');
});

test('subscribers: setting a status that contradicts a suppression is 422 recipient_suppressed', async () => {
  await api.post('/api/v1/suppression', { email: 'stuck@example.com', reason: 'unsubscribe' });
  const sub = await makeSubscriber(app, acme.live, { email: 'stuck@example.com' });
  assert.equal(sub.status, 'unsubscribed');
  const res = await api.patch(`/api/v1/subscribers/${sub.id}`, { status: 'active' });
  assert.equal(res.status, 422);
  assert.equal(res.body.code, 'recipient_suppressed');
  assert.equal((await api.patch(`/api/v1/subscribers/${sub.id}`, { name: 'Still fine' })).status, 200);
});

test('subscribers: changing the email to a suppressed address shows its status', async () => {
  await api.post('/api/v1/suppression', { email: 'bounced-target@example.com', reason: 'hard_bounce' });
  const sub = await makeSubscriber(app, acme.live, { email: 'fresh@example.com' });
  const res = await api.patch(`/api/v1/subscribers/${sub.id}`, { email: 'bounced-target@example.com' });
  assert.equal(res.body.status, 'bounced');
});

test('subscribers: applySuppressionToSubscribers and reactivateSubscribers keep statuses in step with suppression', async () => {
  const sub = await makeSubscriber(app, acme.live, { email: 'hooks@example.com' });
  assert.equal(await applySuppressionToSubscribers(pool, acme.accountId, 'HOOKS@example.com', 'complaint'), 1);
  assert.equal((await api.get(`/api/v1/subscribers/${sub.id}`)).body.status, 'complained');
  assert.equal(await applySuppressionToSubscribers(pool, acme.accountId, 'hooks@example.com', 'manual'), 0);
  assert.equal(await reactivateSubscribers(pool, acme.accountId, 'hooks@example.com'), 1);
  assert.equal((await api.get(`/api/v1/subscribers/${sub.id}`)).body.status, 'active');
  const other = await createTestAccount(pool, 'Elsewhere');
  const theirs = await makeSubscriber(app, other.live, { email: 'hooks@example.com' });
  assert.equal(await applySuppressionToSubscribers(pool, acme.accountId, 'hooks@example.com', 'unsubscribe'), 1);
  assert.equal((await client(app, other.live).get(`/api/v1/subscribers/${theirs.id}`)).body.status, 'active', 'per account');
});

test('subscribers: reactivation leaves an unconfirmed subscriber unconfirmed', async () => {
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const sub = await makeSubscriber(app, acme.live, { email: 'pending-react@example.com', list });
  assert.equal(sub.status, 'unconfirmed');
  assert.equal(await reactivateSubscribers(pool, acme.accountId, 'pending-react@example.com'), 0);
});

test('subscribers: a test key validates and answers like live, with sandbox, but stores nothing', async () => {
  const t = client(app, acme.test);
  const created = await t.post('/api/v1/subscribers', { email: 'sandbox@example.com' });
  assert.equal(created.status, 201);
  assert.equal(created.body.sandbox, true);
  assert.equal((await api.get('/api/v1/subscribers/sandbox@example.com')).status, 404);
  const existing = await makeSubscriber(app, acme.live, { email: 'real@example.com', name: 'Real' });
  const upsert = await t.post('/api/v1/subscribers', { email: 'real@example.com', name: 'Changed' });
  assert.equal(upsert.status, 200);
  assert.equal(upsert.body.name, 'Changed');
  assert.equal((await api.get(`/api/v1/subscribers/${existing.id}`)).body.name, 'Real');
  assert.equal((await t.delete(`/api/v1/subscribers/${existing.id}`)).status, 204);
  assert.equal((await api.get(`/api/v1/subscribers/${existing.id}`)).status, 200);
  assert.equal((await t.get(`/api/v1/subscribers/${existing.id}`)).status, 200, 'test keys read');
});
