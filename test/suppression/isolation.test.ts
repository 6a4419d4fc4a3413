import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp();
const a = await createTestAccount(pool, 'Account A');
const b = await createTestAccount(pool, 'Account B');
const jsonA = { ...a.live, 'content-type': 'application/json' };
const jsonB = { ...b.live, 'content-type': 'application/json' };

await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: jsonA, payload: { email: 'victim@example.com', reason: 'complaint' } });

test('isolation: account A\'s suppression is invisible to account B\'s check and list', async () => {
  const check = await app.inject({ url: '/api/v1/suppression?email=victim@example.com', headers: b.live });
  assert.deepEqual(check.json(), { email: 'victim@example.com', suppressed: false, reason: null, createdAt: null });
  assert.deepEqual((await app.inject({ url: '/api/v1/suppression', headers: b.live })).json(), { data: [], nextCursor: null });
  assert.deepEqual((await app.inject({ url: '/api/v1/suppression?q=victim', headers: b.live })).json().data, []);
});

test('isolation: account B cannot remove account A\'s entry (404), and A\'s entry stays', async () => {
  const res = await app.inject({ method: 'DELETE', url: '/api/v1/suppression?email=victim@example.com', headers: b.live });
  assert.equal(res.statusCode, 404);
  assert.equal((await app.inject({ url: '/api/v1/suppression?email=victim@example.com', headers: a.live })).json().suppressed, true);
});

test('isolation: account B adding the same address creates B\'s own entry (201) and leaves A\'s reason alone', async () => {
  const res = await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: jsonB, payload: { email: 'VICTIM@example.com', reason: 'manual' } });
  assert.equal(res.statusCode, 201);
  assert.equal((await app.inject({ url: '/api/v1/suppression?email=victim@example.com', headers: a.live })).json().reason, 'complaint');
  const bulk = await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: jsonB, payload: { entries: [{ email: 'victim@example.com' }, { email: 'new@example.com' }] } });
  assert.deepEqual(bulk.json(), { created: 1, existing: 1 });
  assert.equal((await app.inject({ url: '/api/v1/suppression?email=new@example.com', headers: a.live })).json().suppressed, false);
});

test('isolation: removing B\'s entry leaves A\'s entry in place', async () => {
  assert.equal((await app.inject({ method: 'DELETE', url: '/api/v1/suppression?email=victim@example.com', headers: b.live })).statusCode, 200);
  assert.equal((await app.inject({ url: '/api/v1/suppression?email=victim@example.com', headers: a.live })).json().suppressed, true);
});

test('suppression routes require an API key', async () => {
  for (const method of ['GET', 'POST', 'DELETE'] as const) {
    const res = await app.inject({ method, url: '/api/v1/suppression?email=victim@example.com' });
    assert.equal(res.statusCode, 401, method);
  }
});
