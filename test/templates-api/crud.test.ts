import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool } = await bootApp({ clock });
const acme = await createTestAccount(pool);
const json = { ...acme.live, 'content-type': 'application/json' };

async function create(body: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: json, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

test('POST /templates: 201 with the full template, timestamps ISO 8601 UTC with ms', async () => {
  const res = await app.inject({
    method: 'POST', url: '/api/v1/templates', headers: json,
    payload: { name: 'Welcome', folder: 'Onboarding', subject: 'Hi {{ first_name | there }}', html: '<p>Hi {{ first_name }}</p>', text: 'Hi {{ first_name }}' },
  });
  assert.equal(res.statusCode, 201);
  const t = res.json();
  assert.match(t.id, /^tpl_[0-9a-f]{32}$/);
  assert.deepEqual({ ...t, id: undefined }, {
    id: undefined, name: 'Welcome', folder: 'Onboarding', subject: 'Hi {{ first_name | there }}',
    html: '<p>Hi {{ first_name }}</p>', text: 'Hi {{ first_name }}',
    createdAt: '2026-11-20T10:00:00.000Z', updatedAt: '2026-11-20T10:00:00.000Z', warnings: [],
  });
});

test('POST /templates: only name is required; absent parts and folder are null', async () => {
  const t = await create({ name: 'Bare' });
  assert.equal(t.folder, null);
  assert.equal(t.subject, null);
  assert.equal(t.html, null);
  assert.equal(t.text, null);
});

test('POST /templates: name and folder are trimmed; an empty folder means no folder', async () => {
  const t = await create({ name: '  Spaced  ', folder: '   ' });
  assert.equal(t.name, 'Spaced');
  assert.equal(t.folder, null);
});

test('POST /templates: missing name, blank name or unknown field is 422 validation_failed', async () => {
  for (const [payload, field] of [[{ subject: 'x' }, 'name'], [{ name: '   ' }, 'name'], [{ name: 'x', body: 'y' }, 'body']] as const) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: json, payload });
    assert.equal(res.statusCode, 422, JSON.stringify(payload));
    assert.equal(res.json().code, 'validation_failed');
    assert.ok(res.json().errors.some((e: { field: string }) => e.field === field), res.body);
  }
});

test('POST /templates: a syntax error is 422 template_error with field, line and column; nothing is stored', async () => {
  const before = (await pool.query('SELECT count(*)::int AS n FROM templates')).rows[0].n;
  const res = await app.inject({
    method: 'POST', url: '/api/v1/templates', headers: json,
    payload: { name: 'Broken', subject: 'ok', html: '<ul>\n  <li>x</li>\n[for item in order.items]\n<li>{{ item.name }}</li>\n' },
  });
  assert.equal(res.statusCode, 422);
  assert.match(res.headers['content-type'] as string, /application\/problem\+json/);
  const body = res.json();
  assert.equal(body.code, 'template_error');
  assert.equal(body.field, 'html');
  assert.equal(body.line, 3);
  assert.equal(body.column, 1);
  assert.match(body.detail, /^html: unclosed loop/);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM templates')).rows[0].n, before);
});

test('POST /templates: unbalanced braces in the subject and a stray [/for] in text are template_error', async () => {
  const a = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: json, payload: { name: 'x', subject: 'Hi {{ name' } });
  assert.equal(a.statusCode, 422);
  assert.deepEqual([a.json().code, a.json().field, a.json().line, a.json().column], ['template_error', 'subject', 1, 4]);
  const b = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: json, payload: { name: 'x', text: 'a\nb [/for]' } });
  assert.equal(b.statusCode, 422);
  assert.deepEqual([b.json().code, b.json().field, b.json().line, b.json().column], ['template_error', 'text', 2, 3]);
});

test('GET /templates/{id}: returns the full template', async () => {
  const t = await create({ name: 'Receipt', folder: 'Billing', subject: 'Receipt', html: '<p>x</p>', text: 'x' });
  const res = await app.inject({ url: `/api/v1/templates/${t.id}`, headers: acme.live });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), t);
});

test('GET /templates/{id}: unknown or malformed id is 404 not_found', async () => {
  for (const id of ['tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10', 'nope', 'msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10']) {
    const res = await app.inject({ url: `/api/v1/templates/${id}`, headers: acme.live });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().code, 'not_found');
  }
});

test('PATCH /templates/{id}: changes only the given fields, null clears, updatedAt moves', async () => {
  const t = await create({ name: 'Patch me', folder: 'A', subject: 'S', html: '<p>h</p>', text: 't' });
  clock.advance(60_000);
  const res = await app.inject({ method: 'PATCH', url: `/api/v1/templates/${t.id}`, headers: json, payload: { folder: 'B', text: null } });
  assert.equal(res.statusCode, 200);
  const u = res.json();
  assert.deepEqual(u, { ...t, folder: 'B', text: null, updatedAt: '2026-11-20T10:01:00.000Z' });
  assert.deepEqual((await app.inject({ url: `/api/v1/templates/${t.id}`, headers: acme.live })).json(), u);
});

test('PATCH /templates/{id}: a syntax error is template_error and the template is unchanged', async () => {
  const t = await create({ name: 'Keep', html: '<p>ok</p>' });
  const res = await app.inject({ method: 'PATCH', url: `/api/v1/templates/${t.id}`, headers: json, payload: { name: 'Renamed', html: '[for x in]' } });
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().code, 'template_error');
  assert.deepEqual((await app.inject({ url: `/api/v1/templates/${t.id}`, headers: acme.live })).json(), t);
});

test('PATCH /templates/{id}: an empty body or a null name is 422; an unknown id is 404', async () => {
  const t = await create({ name: 'Strict' });
  const empty = await app.inject({ method: 'PATCH', url: `/api/v1/templates/${t.id}`, headers: json, payload: {} });
  assert.equal(empty.statusCode, 422);
  const nullName = await app.inject({ method: 'PATCH', url: `/api/v1/templates/${t.id}`, headers: json, payload: { name: null } });
  assert.equal(nullName.statusCode, 422);
  const missing = await app.inject({ method: 'PATCH', url: '/api/v1/templates/tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10', headers: json, payload: { name: 'x' } });
  assert.equal(missing.statusCode, 404);
});

test('DELETE /templates/{id}: 200 {id, deleted}, then the template is gone (404 on every route)', async () => {
  const t = await create({ name: 'Doomed' });
  const res = await app.inject({ method: 'DELETE', url: `/api/v1/templates/${t.id}`, headers: acme.live });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { id: t.id, deleted: true });
  assert.equal((await app.inject({ url: `/api/v1/templates/${t.id}`, headers: acme.live })).statusCode, 404);
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v1/templates/${t.id}`, headers: acme.live })).statusCode, 404);
});
