import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp({
  env: { POSTLINE_BODY_LIMIT: '2048' },
  setup(app) {
    // A test-only route with a schema, to exercise the real validation and error plugins.
    app.post('/api/v1/_echo', {
      schema: { body: Type.Object({ to: Type.String({ format: 'email' }), count: Type.Integer({ minimum: 1, maximum: 5 }), from: Type.Object({ email: Type.String() }) }, { additionalProperties: false }) },
    }, async (request) => request.body);
    app.get('/api/v1/_boom', async () => {
      throw new Error('secret internal detail: password=hunter2');
    });
  },
});
const acme = await createTestAccount(pool);
const json = { ...acme.live, 'content-type': 'application/json' };

test('errors: unknown route is a 404 not_found problem', async () => {
  const res = await app.inject({ url: '/api/v1/does-not-exist', headers: acme.live });
  assert.equal(res.statusCode, 404);
  assert.match(res.headers['content-type'] as string, /application\/problem\+json/);
  assert.equal(res.json().code, 'not_found');
  assert.equal((await app.inject({ url: '/nowhere' })).json().code, 'not_found');
});

test('errors: malformed JSON is 400 invalid_json', async () => {
  const res = await app.inject({ method: 'POST', url: '/api/v1/_echo', headers: json, payload: '{"to": ' });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().code, 'invalid_json');
});

test('errors: wrong content type is 400 invalid_json', async () => {
  const res = await app.inject({ method: 'POST', url: '/api/v1/_echo', headers: { ...acme.live, 'content-type': 'text/plain' }, payload: 'hello' });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().code, 'invalid_json');
});

test('errors: empty JSON body is 400 invalid_json', async () => {
  const res = await app.inject({ method: 'POST', url: '/api/v1/_echo', headers: json, payload: '' });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().code, 'invalid_json');
});

test('errors: body at the limit passes parsing, one byte over is 413 payload_too_large', async () => {
  const base = JSON.stringify({ to: 'a@b.co', count: 1, from: { email: 'x' }, pad: '' });
  const at = JSON.stringify({ to: 'a@b.co', count: 1, from: { email: 'x' }, pad: 'x'.repeat(2048 - base.length) });
  assert.equal(Buffer.byteLength(at), 2048);
  const ok = await app.inject({ method: 'POST', url: '/api/v1/_echo', headers: json, payload: at });
  assert.equal(ok.statusCode, 422, 'parsed, then refused by the schema for the unknown field');
  const over = await app.inject({ method: 'POST', url: '/api/v1/_echo', headers: json, payload: at + ' ' });
  assert.equal(over.statusCode, 413);
  assert.equal(over.json().code, 'payload_too_large');
});

test('errors: schema failure is 422 validation_failed with per-field errors', async () => {
  const res = await app.inject({ method: 'POST', url: '/api/v1/_echo', headers: json, payload: { to: 'nope', count: 9, from: {}, extra: 1 } });
  assert.equal(res.statusCode, 422);
  const body = res.json();
  assert.equal(body.code, 'validation_failed');
  const fields = body.errors.map((e: { field: string }) => e.field).sort();
  assert.deepEqual(fields, ['count', 'extra', 'from.email', 'to']);
  for (const e of body.errors) assert.ok(e.message.length > 0);
});

test('errors: a 500 hides internals and carries the request id', async () => {
  const res = await app.inject({ url: '/api/v1/_boom', headers: acme.live });
  assert.equal(res.statusCode, 500);
  const body = res.json();
  assert.equal(body.code, 'internal_error');
  assert.ok(!res.body.includes('hunter2'));
  assert.ok(!res.body.includes('at '), 'no stack trace');
  assert.equal(body.requestId, res.headers['x-request-id']);
  assert.match(body.detail, new RegExp(body.requestId));
});

test('errors: auth is checked before validation', async () => {
  const res = await app.inject({ method: 'POST', url: '/api/v1/_echo', headers: { 'content-type': 'application/json' }, payload: '{bad' });
  assert.equal(res.statusCode, 401);
});
