import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { DASHBOARD_DIR } from '../../src/http/plugins/dashboard.js';
import { bootApp } from '../helpers/app.js';

/** Large answers go out compressed; the dashboard's hashed assets are cached for a year. */
const { app } = await bootApp();

test('compression: openapi.json is brotli- or gzip-compressed as the client asks, and decodes to the same document', async () => {
  const plain = await app.inject({ url: '/api/v1/openapi.json' });
  assert.equal(plain.headers['content-encoding'], undefined);
  const br = await app.inject({ url: '/api/v1/openapi.json', headers: { 'accept-encoding': 'br, gzip' } });
  assert.equal(br.headers['content-encoding'], 'br');
  assert.ok(br.rawPayload.length < plain.rawPayload.length / 5, `${br.rawPayload.length} of ${plain.rawPayload.length} bytes`);
  assert.deepEqual(JSON.parse(brotliDecompressSync(br.rawPayload).toString()), plain.json());
  const gz = await app.inject({ url: '/api/v1/openapi.json', headers: { 'accept-encoding': 'gzip' } });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(gz.rawPayload).length, plain.rawPayload.length);
});

test('compression: a small answer is sent as is', async () => {
  const res = await app.inject({ url: '/healthz', headers: { 'accept-encoding': 'br, gzip' } });
  assert.equal(res.headers['content-encoding'], undefined);
});

test('dashboard assets: the JS bundle is compressed and cached for a year (its name carries its hash)', async () => {
  const js = readdirSync(`${DASHBOARD_DIR}assets`).find((f) => f.startsWith('index-') && f.endsWith('.js'));
  assert.ok(js, 'web/dist is built');
  const res = await app.inject({ url: `/assets/${js}`, headers: { 'accept-encoding': 'br, gzip' } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-encoding'], 'br');
  assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
  const index = await app.inject({ url: '/', headers: { accept: 'text/html' } });
  assert.equal(index.headers['cache-control'], 'no-cache', 'the page that names the hashes is revalidated');
});
