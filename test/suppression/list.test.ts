import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);
const json = { ...acme.live, 'content-type': 'application/json' };

const added: { email: string; reason: string }[] = [
  { email: 'ann@shop.example', reason: 'manual' },
  { email: 'bob@shop.example', reason: 'hard_bounce' },
  { email: 'Cy_100%@other.example', reason: 'complaint' },
  { email: 'dee@other.example', reason: 'unsubscribe' },
  { email: 'eve@exämple.de', reason: 'hard_bounce' },
];
const ids: string[] = [];
for (const e of added) {
  const res = await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: json, payload: e });
  assert.equal(res.statusCode, 201);
  ids.push(res.json().id);
}

async function list(query: string) {
  const res = await app.inject({ url: `/api/v1/suppression${query}`, headers: acme.live });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { data: { id: string; email: string; reason: string }[]; nextCursor: string | null };
}

test('GET /suppression: without email lists the entries, newest first', async () => {
  const page = await list('');
  assert.deepEqual(page.data.map((e) => e.id), [...ids].reverse());
  assert.equal(page.nextCursor, null);
  assert.deepEqual(Object.keys(page.data[0]).sort(), ['bounceReason', 'createdAt', 'detail', 'email', 'id', 'reason']);
});

test('GET /suppression: order=asc, limit and cursor walk every entry once', async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await list(`?order=asc&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...page.data.map((e) => e.id));
    cursor = page.nextCursor;
  } while (cursor);
  assert.deepEqual(seen, ids);
});

test('GET /suppression: reason filters; an unknown reason is 422', async () => {
  assert.deepEqual((await list('?reason=hard_bounce&order=asc')).data.map((e) => e.email), ['bob@shop.example', 'eve@exämple.de']);
  const res = await app.inject({ url: '/api/v1/suppression?reason=bogus', headers: acme.live });
  assert.equal(res.statusCode, 422);
});

test('GET /suppression: q matches part of the address, case-insensitively, % and _ literal', async () => {
  assert.deepEqual((await list('?q=SHOP&order=asc')).data.map((e) => e.email), ['ann@shop.example', 'bob@shop.example']);
  assert.deepEqual((await list('?q=_100%25')).data.map((e) => e.email), ['Cy_100%@other.example']);
  assert.deepEqual((await list('?q=other&reason=unsubscribe')).data.map((e) => e.email), ['dee@other.example']);
  assert.deepEqual((await list('?q=exämple')).data.map((e) => e.email), ['eve@exämple.de']);
  assert.deepEqual((await list('?q=xn--exmple')).data.map((e) => e.email), ['eve@exämple.de']);
});

test('GET /suppression: an internationalised domain matches its punycode spelling', async () => {
  const res = await app.inject({ url: '/api/v1/suppression?email=EVE@xn--exmple-cua.de', headers: acme.live });
  assert.equal(res.json().suppressed, true);
  assert.equal(res.json().reason, 'hard_bounce');
});
