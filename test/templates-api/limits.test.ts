import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);
const json = { ...acme.live, 'content-type': 'application/json' };
const MiB2 = 2 * 1024 * 1024;

const post = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/v1/templates', headers: json, payload });

function assertRefused(res: Awaited<ReturnType<typeof post>>, field: string) {
  assert.equal(res.statusCode, 422, res.body.slice(0, 300));
  const body = res.json();
  assert.equal(body.code, 'validation_failed');
  assert.ok(body.errors.some((e: { field: string }) => e.field === field), res.body.slice(0, 300));
}

test('limits: name of 200 characters is accepted, 201 is 422 (characters, not bytes or UTF-16 units)', async () => {
  assert.equal((await post({ name: 'n'.repeat(200) })).statusCode, 201);
  assert.equal((await post({ name: '😀'.repeat(200) })).statusCode, 201);
  assertRefused(await post({ name: 'n'.repeat(201) }), 'name');
  assertRefused(await post({ name: '😀'.repeat(201) }), 'name');
});

test('limits: folder of 200 characters is accepted, 201 is 422', async () => {
  const ok = await post({ name: 'f', folder: 'é'.repeat(200) });
  assert.equal(ok.statusCode, 201);
  assert.equal(ok.json().folder, 'é'.repeat(200));
  assertRefused(await post({ name: 'f', folder: 'f'.repeat(201) }), 'folder');
});

test('limits: subject of 998 bytes is accepted, 999 bytes is 422, counted in UTF-8', async () => {
  assert.equal((await post({ name: 's', subject: 's'.repeat(998) })).statusCode, 201);
  assert.equal((await post({ name: 's', subject: 'é'.repeat(499) })).statusCode, 201, '998 bytes in 499 characters');
  assertRefused(await post({ name: 's', subject: 's'.repeat(999) }), 'subject');
  assertRefused(await post({ name: 's', subject: 'é'.repeat(500) }), 'subject');
});

test('limits: html and text of exactly 2 MiB each are accepted in one request', async () => {
  const html = '<p>' + 'h'.repeat(MiB2 - 7) + '</p>';
  const text = 'é'.repeat(MiB2 / 2);
  assert.equal(Buffer.byteLength(html), MiB2);
  assert.equal(Buffer.byteLength(text), MiB2);
  const res = await post({ name: 'big', html, text });
  assert.equal(res.statusCode, 201);
  const got = (await app.inject({ url: `/api/v1/templates/${res.json().id}`, headers: acme.live })).json();
  assert.equal(got.html.length, html.length);
  assert.equal(got.text, text);
});

test('limits: html or text one byte over 2 MiB is 422', async () => {
  assertRefused(await post({ name: 'big', html: 'h'.repeat(MiB2 + 1) }), 'html');
  assertRefused(await post({ name: 'big', text: 'é'.repeat(MiB2 / 2) + 't' }), 'text');
});

test('limits: PATCH enforces the same limits', async () => {
  const t = (await post({ name: 'patched' })).json();
  const patch = (payload: Record<string, unknown>) => app.inject({ method: 'PATCH', url: `/api/v1/templates/${t.id}`, headers: json, payload });
  assert.equal((await patch({ subject: 's'.repeat(998) })).statusCode, 200);
  assertRefused(await patch({ subject: 'é'.repeat(500) }), 'subject');
  assertRefused(await patch({ name: 'n'.repeat(201) }), 'name');
  assertRefused(await patch({ html: 'h'.repeat(MiB2 + 1) }), 'html');
  assert.equal((await patch({ html: 'h'.repeat(MiB2) })).statusCode, 200);
});
