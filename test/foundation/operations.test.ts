import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);

test('operations: /healthz answers without the database', async () => {
  const res = await app.inject({ url: '/healthz' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { status: 'ok' });
});

test('operations: /readyz is ready when migrations are applied', async () => {
  const res = await app.inject({ url: '/readyz' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().status, 'ready');
});

test('operations: /metrics exposes request counts, latency by route and pool gauges', async () => {
  await app.inject({ url: '/api/v1/me', headers: acme.live });
  const res = await app.inject({ url: '/metrics' });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /postline_http_requests_total\{method="GET",route="\/api\/v1\/me",status="200"\} \d+/);
  assert.match(res.body, /postline_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/me",status="200"\}/);
  assert.match(res.body, /postline_db_pool_total \d+/);
});

test('openapi: the 3.1 document lists routes with auth schemes and problem responses', async () => {
  const res = await app.inject({ url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json();
  assert.equal(doc.openapi, '3.1.0');
  assert.ok(doc.components.securitySchemes.bearer);
  assert.ok(doc.components.securitySchemes.apiKey);
  const me = doc.paths['/api/v1/me'].get;
  assert.deepEqual(me.security, [{ bearer: [] }, { apiKey: [] }, { session: [] }]);
  assert.ok(me.responses['200']);
  assert.ok(me.responses['401']);
  assert.ok(me.responses['429']);
  assert.ok(JSON.stringify(me).includes('example'), 'responses carry examples');
  assert.ok(!doc.paths['/metrics'], 'internal routes are hidden');
});

test('openapi: /docs serves a human page', async () => {
  const res = await app.inject({ url: '/docs/' });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /text\/html/);
});
