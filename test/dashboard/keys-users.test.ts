import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapDefaultAccount, OWNER_EMAIL } from '../../src/bootstrap.js';
import { bootApp, createTestAccount, testConfig } from '../helpers/app.js';

const { app, pool } = await bootApp();

// First: on the empty database, the first-start banner.
const banner = await bootstrapDefaultAccount(pool, testConfig({ POSTLINE_BASE_URL: 'http://127.0.0.1:3999' }));
const acme = await createTestAccount(pool, 'Acme');
const other = await createTestAccount(pool, 'Other');

test('first start: prints the dashboard URL and a one-time sign-in link next to the keys; the link works once', async () => {
  assert.ok(banner);
  assert.match(banner, /live key {2}sk_live_/);
  assert.match(banner, /Dashboard: http:\/\/127\.0\.0\.1:3999\//);
  const token = /sign-in#link=(sil_[A-Za-z0-9_-]+)/.exec(banner)?.[1];
  assert.ok(token, banner);
  const first = await app.inject({ method: 'POST', url: '/api/v1/session', payload: { token } });
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(first.json().user.email, OWNER_EMAIL);
  assert.equal(first.json().user.hasPassword, false);
  const again = await app.inject({ method: 'POST', url: '/api/v1/session', payload: { token } });
  assert.equal(again.statusCode, 401, 'single use');
  assert.equal(await bootstrapDefaultAccount(pool, testConfig()), null, 'only on the first start');
});

test('keys: create live and test keys, list with prefixes only, revoke; the revoked key gets 401', async () => {
  const live = await app.inject({ method: 'POST', url: '/api/v1/keys', headers: acme.live, payload: { name: 'server' } });
  assert.equal(live.statusCode, 201, live.body);
  assert.equal(live.json().mode, 'live');
  assert.match(live.json().key, /^sk_live_/);
  const testKey = await app.inject({ method: 'POST', url: '/api/v1/keys', headers: acme.live, payload: { mode: 'test' } });
  assert.equal(testKey.json().mode, 'test');
  assert.match(testKey.json().key, /^sk_test_/);
  assert.equal(testKey.json().name, null);
  const me = await app.inject({ url: '/api/v1/me', headers: { authorization: `Bearer ${live.json().key}` } });
  assert.equal(me.statusCode, 200);

  const page1 = await app.inject({ url: '/api/v1/keys?limit=2', headers: acme.live });
  assert.equal(page1.json().data.length, 2);
  assert.ok(page1.json().nextCursor, 'paginated on the server');
  const page2 = await app.inject({ url: `/api/v1/keys?limit=2&cursor=${page1.json().nextCursor}`, headers: acme.live });
  const all = [...page1.json().data, ...page2.json().data];
  assert.equal(all.length, 4);
  assert.ok(!JSON.stringify(all).includes(live.json().key), 'never the full key again');
  assert.ok(all.every((k: { accountId?: string }) => k.accountId === undefined));

  const revoked = await app.inject({ method: 'DELETE', url: `/api/v1/keys/${live.json().id}`, headers: acme.live });
  assert.equal(revoked.statusCode, 200);
  assert.ok(revoked.json().revokedAt);
  assert.equal((await app.inject({ url: '/api/v1/me', headers: { authorization: `Bearer ${live.json().key}` } })).statusCode, 401);
});

test('keys: another account\'s key id is not found and stays valid', async () => {
  const theirs = await app.inject({ method: 'POST', url: '/api/v1/keys', headers: other.live, payload: {} });
  const res = await app.inject({ method: 'DELETE', url: `/api/v1/keys/${theirs.json().id}`, headers: acme.live });
  assert.equal(res.statusCode, 404);
  assert.equal((await app.inject({ url: '/api/v1/me', headers: { authorization: `Bearer ${theirs.json().key}` } })).statusCode, 200);
});

test('keys: a test key creates and revokes nothing and says sandbox', async () => {
  const before = (await pool.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n;
  const created = await app.inject({ method: 'POST', url: '/api/v1/keys', headers: acme.test, payload: { name: 'x' } });
  assert.equal(created.statusCode, 201);
  assert.equal(created.json().sandbox, true);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n, before);
  assert.equal((await app.inject({ url: '/api/v1/me', headers: { authorization: `Bearer ${created.json().key}` } })).statusCode, 401);
  const { rows } = await pool.query('SELECT id FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL LIMIT 1', [acme.accountId]);
  const rev = await app.inject({ method: 'DELETE', url: `/api/v1/keys/${rows[0].id}`, headers: acme.test });
  assert.equal(rev.json().sandbox, true);
  assert.equal((await pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [rows[0].id])).rows[0].revoked_at, null);
});

test('keys: bad input is a 422 problem', async () => {
  for (const payload of [{ mode: 'prod' }, { name: '' }, { name: 'x'.repeat(101) }, { extra: 1 }, { name: 'a\u0000b' }]) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/keys', headers: acme.live, payload });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(payload)} → ${res.statusCode}`);
  }
  assert.equal((await app.inject({ url: '/api/v1/keys?limit=501', headers: acme.live })).statusCode, 422);
  assert.equal((await app.inject({ url: '/api/v1/keys?limit=500', headers: acme.live })).statusCode, 200);
});

test('users: create, list, change password (other sessions end), delete; duplicates conflict; ids of other accounts not found', async () => {
  const created = await app.inject({ method: 'POST', url: '/api/v1/users', headers: acme.live, payload: { email: 'grace@example.com', password: 'a long passphrase' } });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id;
  assert.equal(created.json().hasPassword, true);
  const dup = await app.inject({ method: 'POST', url: '/api/v1/users', headers: other.live, payload: { email: 'GRACE@example.com', password: 'a long passphrase' } });
  assert.equal(dup.statusCode, 409);
  const short = await app.inject({ method: 'POST', url: '/api/v1/users', headers: acme.live, payload: { email: 'h@example.com', password: 'short' } });
  assert.equal(short.statusCode, 422);
  assert.equal(short.json().errors[0].field, 'password');

  const session = await app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'grace@example.com', password: 'a long passphrase' } });
  const cookie = String(session.headers['set-cookie']).split(';')[0];
  const changed = await app.inject({ method: 'PATCH', url: `/api/v1/users/${id}`, headers: acme.live, payload: { password: 'another long one' } });
  assert.equal(changed.statusCode, 200);
  assert.equal((await app.inject({ url: '/api/v1/me', headers: { cookie } })).statusCode, 401, 'a new password ends sessions');
  assert.equal((await app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'grace@example.com', password: 'another long one' } })).statusCode, 200);

  const list = await app.inject({ url: '/api/v1/users', headers: acme.live });
  assert.ok(list.json().data.some((u: { id: string }) => u.id === id));
  assert.equal((await app.inject({ url: `/api/v1/users/${id}`, headers: other.live })).statusCode, 404);
  assert.equal((await app.inject({ method: 'PATCH', url: `/api/v1/users/${id}`, headers: other.live, payload: { email: 'x@example.com' } })).statusCode, 404);
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v1/users/${id}`, headers: other.live })).statusCode, 404);
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v1/users/${id}`, headers: acme.test })).statusCode, 204);
  assert.equal((await app.inject({ url: `/api/v1/users/${id}`, headers: acme.live })).statusCode, 200, 'a test key deletes nothing');
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v1/users/${id}`, headers: acme.live })).statusCode, 204);
  assert.equal((await app.inject({ url: `/api/v1/users/${id}`, headers: acme.live })).statusCode, 404);
});

test('users: a signed-in person cannot delete themselves', async () => {
  await app.inject({ method: 'POST', url: '/api/v1/users', headers: acme.live, payload: { email: 'self@example.com', password: 'a long passphrase' } });
  const s = await app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'self@example.com', password: 'a long passphrase' } });
  const headers = { cookie: String(s.headers['set-cookie']).split(';')[0], 'x-csrf-token': s.json().csrfToken };
  const res = await app.inject({ method: 'DELETE', url: `/api/v1/users/${s.json().user.id}`, headers });
  assert.equal(res.statusCode, 409);
});
