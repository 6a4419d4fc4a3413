import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool, 'Acme');

test('me: live key via Authorization: Bearer returns account and key', async () => {
  const res = await app.inject({ url: '/api/v1/me', headers: acme.live });
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.deepEqual(body.account, { id: acme.accountId, name: 'Acme' });
  assert.equal(body.key.mode, 'live');
  assert.ok(acme.liveKey.startsWith(body.key.prefix));
  assert.ok(!JSON.stringify(body).includes(acme.liveKey), 'the full key is never echoed');
});

test('me: test key via X-Api-Key reports mode test', async () => {
  const res = await app.inject({ url: '/api/v1/me', headers: { 'x-api-key': acme.testKey } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().key.mode, 'test');
});

test('auth: missing, malformed and unknown keys get 401 unauthorized problems', async () => {
  const cases: Record<string, string>[] = [
    {},
    { authorization: 'Bearer' },
    { authorization: 'Bearer not-a-key' },
    { authorization: 'Basic dXNlcjpwYXNz' },
    { 'x-api-key': 'sk_live_' + 'A'.repeat(43) },
    { authorization: `Bearer ${acme.liveKey.slice(0, -1)}X` },
  ];
  for (const headers of cases) {
    const res = await app.inject({ url: '/api/v1/me', headers });
    assert.equal(res.statusCode, 401, JSON.stringify(headers));
    assert.match(res.headers['content-type'] as string, /application\/problem\+json/);
    const body = res.json();
    assert.equal(body.code, 'unauthorized');
    assert.equal(body.status, 401);
    assert.ok(body.type && body.title && body.detail);
  }
});

test('auth: a key revoked through the API is refused at once', async () => {
  const other = await createTestAccount(pool, 'Revoked Inc');
  assert.equal((await app.inject({ url: '/api/v1/me', headers: other.live })).statusCode, 200);
  const me = (await app.inject({ url: '/api/v1/me', headers: other.live })).json();
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v1/keys/${me.key.id}`, headers: other.live })).statusCode, 200);
  const res = await app.inject({ url: '/api/v1/me', headers: other.live });
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().code, 'unauthorized');
});

test('api keys: only a SHA-256 hash is stored, never the key', async () => {
  const { rows } = await pool.query('SELECT * FROM api_keys WHERE account_id = $1', [acme.accountId]);
  assert.equal(rows.length, 2);
  for (const r of rows) {
    assert.equal(r.key_hash.length, 32);
    assert.ok(!JSON.stringify(r).includes(acme.liveKey.slice(8)));
  }
});

test('api keys: last-used time is recorded', async () => {
  await app.inject({ url: '/api/v1/me', headers: acme.live });
  for (let i = 0; i < 20; i++) {
    const { rows } = await pool.query(`SELECT last_used_at FROM api_keys WHERE account_id = $1 AND mode = 'live'`, [acme.accountId]);
    if (rows[0].last_used_at) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail('last_used_at was not set');
});
