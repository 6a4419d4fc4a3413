import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);
const json = { ...acme.live, 'content-type': 'application/json' };

const made: { id: string; name: string; folder: string | null }[] = [];
for (const [name, folder] of [
  ['Welcome', 'Onboarding'], ['Welcome back', 'Onboarding'], ['Receipt', 'Billing'], ['Invoice overdue', 'Billing'],
  ['Password reset', null], ['100% off_sale', 'Marketing'], ['Weekly digest', 'Marketing'],
] as const) {
  const res = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: json, payload: { name, folder, html: `<p>${name}</p>`, subject: name } });
  assert.equal(res.statusCode, 201);
  made.push(res.json());
}

async function list(query: string) {
  const res = await app.inject({ url: `/api/v1/templates${query}`, headers: acme.live });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { data: Record<string, unknown>[]; nextCursor: string | null };
}

test('GET /templates: newest first by default, items without bodies', async () => {
  const page = await list('');
  assert.deepEqual(page.data.map((t) => t.id), made.map((t) => t.id).reverse());
  assert.equal(page.nextCursor, null);
  assert.deepEqual(Object.keys(page.data[0]).sort(), ['createdAt', 'folder', 'id', 'name', 'subject', 'updatedAt']);
});

test('GET /templates: order=asc is oldest first', async () => {
  assert.deepEqual((await list('?order=asc')).data.map((t) => t.id), made.map((t) => t.id));
});

test('GET /templates: limit and cursor walk every template once', async () => {
  const seen: unknown[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await list(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
    assert.ok(page.data.length <= 3);
    seen.push(...page.data.map((t) => t.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  assert.equal(pages, 3);
  assert.deepEqual(seen, made.map((t) => t.id).reverse());
});

test('GET /templates: limit outside 1–500 and a forged cursor are 422', async () => {
  for (const q of ['?limit=0', '?limit=501', '?cursor=bm9wZQ', '?order=sideways']) {
    const res = await app.inject({ url: `/api/v1/templates${q}`, headers: acme.live });
    assert.equal(res.statusCode, 422, q);
    assert.equal(res.json().code, 'validation_failed');
  }
});

test('GET /templates: folder filters by folder; an empty folder= lists the templates in no folder', async () => {
  assert.deepEqual((await list('?folder=Billing&order=asc')).data.map((t) => t.name), ['Receipt', 'Invoice overdue']);
  assert.deepEqual((await list('?folder=')).data.map((t) => t.name), ['Password reset']);
  assert.deepEqual((await list('?folder=Nope')).data, []);
});

test('GET /templates: q matches a substring of the name, case-insensitively, % and _ literal', async () => {
  assert.deepEqual((await list('?q=WELCOME&order=asc')).data.map((t) => t.name), ['Welcome', 'Welcome back']);
  assert.deepEqual((await list('?q=%25')).data.map((t) => t.name), ['100% off_sale']);
  assert.deepEqual((await list('?q=f_s')).data.map((t) => t.name), ['100% off_sale']);
  assert.deepEqual((await list('?q=w&folder=Marketing')).data.map((t) => t.name), ['Weekly digest']);
});

test('GET /templates/folders: folder names with counts, by name, unfiled last as null', async () => {
  const res = await app.inject({ url: '/api/v1/templates/folders', headers: acme.live });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    data: [
      { folder: 'Billing', count: 2 }, { folder: 'Marketing', count: 2 }, { folder: 'Onboarding', count: 2 }, { folder: null, count: 1 },
    ],
  });
});

test('GET /templates/folders: a folder disappears with its last template', async () => {
  const other = await createTestAccount(pool, 'Folders Inc');
  const h = { ...other.live, 'content-type': 'application/json' };
  const t = (await app.inject({ method: 'POST', url: '/api/v1/templates', headers: h, payload: { name: 'Only', folder: 'Solo' } })).json();
  assert.deepEqual((await app.inject({ url: '/api/v1/templates/folders', headers: other.live })).json(), { data: [{ folder: 'Solo', count: 1 }] });
  await app.inject({ method: 'PATCH', url: `/api/v1/templates/${t.id}`, headers: h, payload: { folder: null } });
  assert.deepEqual((await app.inject({ url: '/api/v1/templates/folders', headers: other.live })).json(), { data: [{ folder: null, count: 1 }] });
  await app.inject({ method: 'DELETE', url: `/api/v1/templates/${t.id}`, headers: other.live });
  assert.deepEqual((await app.inject({ url: '/api/v1/templates/folders', headers: other.live })).json(), { data: [] });
});
