import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp();
const a = await createTestAccount(pool, 'Account A');
const b = await createTestAccount(pool, 'Account B');
const jsonA = { ...a.live, 'content-type': 'application/json' };
const jsonB = { ...b.live, 'content-type': 'application/json' };

const created = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: jsonA, payload: { name: 'A secret', folder: 'A folder', subject: 'S', html: '<p>{{ x }}</p>' } });
const tplA = created.json();

test('isolation: account B does not see account A\'s templates in the list, the search or the folders', async () => {
  assert.deepEqual((await app.inject({ url: '/api/v1/templates', headers: b.live })).json(), { data: [], nextCursor: null });
  assert.deepEqual((await app.inject({ url: '/api/v1/templates?q=secret', headers: b.live })).json().data, []);
  assert.deepEqual((await app.inject({ url: '/api/v1/templates?folder=A%20folder', headers: b.live })).json().data, []);
  assert.deepEqual((await app.inject({ url: '/api/v1/templates/folders', headers: b.live })).json(), { data: [] });
});

test('isolation: account B gets 404 for account A\'s template id on get, patch, delete and render', async () => {
  const tries = [
    app.inject({ url: `/api/v1/templates/${tplA.id}`, headers: b.live }),
    app.inject({ method: 'PATCH', url: `/api/v1/templates/${tplA.id}`, headers: jsonB, payload: { name: 'pwned' } }),
    app.inject({ method: 'DELETE', url: `/api/v1/templates/${tplA.id}`, headers: b.live }),
    app.inject({ method: 'POST', url: `/api/v1/templates/${tplA.id}/render`, headers: jsonB, payload: { variables: { x: 1 } } }),
  ];
  for (const res of await Promise.all(tries)) {
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().code, 'not_found');
    assert.doesNotMatch(res.body, /A secret/);
  }
});

test('isolation: account A\'s template is unchanged after account B\'s attempts', async () => {
  const res = await app.inject({ url: `/api/v1/templates/${tplA.id}`, headers: a.live });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), tplA);
});

test('isolation: a cursor from account A\'s list does not reveal A\'s templates to B', async () => {
  for (let i = 0; i < 3; i++) await app.inject({ method: 'POST', url: '/api/v1/templates', headers: jsonA, payload: { name: `A${i}` } });
  const pageA = (await app.inject({ url: '/api/v1/templates?limit=1', headers: a.live })).json();
  assert.ok(pageA.nextCursor);
  const res = await app.inject({ url: `/api/v1/templates?cursor=${pageA.nextCursor}`, headers: b.live });
  assert.deepEqual(res.json(), { data: [], nextCursor: null });
});

test('templates routes require an API key', async () => {
  for (const [method, url] of [['GET', '/api/v1/templates'], ['GET', '/api/v1/templates/folders'], ['GET', `/api/v1/templates/${tplA.id}`], ['POST', `/api/v1/templates/${tplA.id}/render`]] as const) {
    const res = await app.inject({ method, url });
    assert.equal(res.statusCode, 401, url);
  }
});
