import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runPendingImports } from '../../src/domain/audience/imports.js';
import { releaseFailedImport } from '../../src/db/queries/imports.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { makeList } from '../audience/helpers.js';

/** Requests that answered 500, and an import that never finished. */
const { app, pool, config } = await bootApp();
const acme = await createTestAccount(pool);
const json = { ...acme.live, 'content-type': 'application/json' };

test('imports: POST /subscribers/import without a body is a 422 naming the body, with or without a content type', async () => {
  for (const headers of [acme.live, { ...acme.live, 'content-type': 'application/json' }, { ...acme.live, 'content-type': 'text/csv' }]) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/subscribers/import', headers });
    assert.ok(res.statusCode === 422 || res.statusCode === 400, `${JSON.stringify(headers)} → ${res.statusCode} ${res.body}`);
    assert.ok(['validation_failed', 'invalid_json'].includes(res.json().code));
  }
});

test('imports: rows holding NUL or a lone surrogate are reported by row and the import completes (JSON and CSV)', async () => {
  const list = await makeList(app, acme.live, { name: 'NUL import' });
  const jsonBody = `{"list":"${list}","subscribers":[{"email":"ok1@example.com"},{"email":"nul@example.com","name":"a\\u0000b"},{"email":"sur@example.com","attributes":{"x":"\\ud800"}},{"email":"ok2@example.com"}]}`;
  const a = await app.inject({ method: 'POST', url: '/api/v1/subscribers/import', headers: json, payload: jsonBody });
  assert.equal(a.statusCode, 202, a.body);
  const csv = `email,name\nok3@example.com,Fine\nbad@example.com,Nul\u0000Name\nok4@example.com,Fine\n`;
  const b = await app.inject({ method: 'POST', url: `/api/v1/subscribers/import?list=${list}`, headers: { ...acme.live, 'content-type': 'text/csv' }, payload: csv });
  assert.equal(b.statusCode, 202, b.body);
  assert.equal(await runPendingImports(pool), 2);
  const first = (await app.inject({ url: `/api/v1/imports/${a.json().id}`, headers: acme.live })).json();
  assert.equal(first.status, 'completed');
  assert.deepEqual([first.created, first.skipped], [2, 2]);
  assert.deepEqual(first.errors.map((e: { row: number }) => e.row), [2, 3]);
  assert.match(first.errors[0].message, /NUL/);
  assert.match(first.errors[1].message, /surrogate/);
  const second = (await app.inject({ url: `/api/v1/imports/${b.json().id}`, headers: acme.live })).json();
  assert.equal(second.status, 'completed');
  assert.deepEqual([second.created, second.skipped, second.errors[0].row], [2, 1, 2]);
});

test('imports: a CSV body that is not UTF-8 is a 400', async () => {
  const list = await makeList(app, acme.live, { name: 'Latin-1' });
  const res = await app.inject({ method: 'POST', url: `/api/v1/subscribers/import?list=${list}`, headers: { ...acme.live, 'content-type': 'text/csv' }, payload: Buffer.from('email,name\nx@example.com,Jos\xe9\n', 'latin1') });
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(res.json().code, 'invalid_json');
});

test('imports: the failure path records a final failure (its statement is typed), so the import does not stay running', async () => {
  const list = await makeList(app, acme.live, { name: 'Fails' });
  const res = await app.inject({ method: 'POST', url: '/api/v1/subscribers/import', headers: json, payload: { list, subscribers: [{ email: 'f@example.com' }] } });
  const id = res.json().id as string;
  await pool.query(`UPDATE subscriber_imports SET status = 'running', locked_by = 'w1' WHERE id = $1`, [id]);
  const now = new Date('2026-11-23T12:00:00.000Z');
  await releaseFailedImport(pool, id, 'w1', { message: 'boom', final: true, retryAt: new Date(now.getTime() + 10_000), now });
  const failed = (await app.inject({ url: `/api/v1/imports/${id}`, headers: acme.live })).json();
  assert.deepEqual([failed.status, failed.failure, failed.finishedAt], ['failed', 'boom', now.toISOString()]);
  await pool.query(`UPDATE subscriber_imports SET status = 'running', locked_by = 'w1', finished_at = NULL WHERE id = $1`, [id]);
  await releaseFailedImport(pool, id, 'w1', { message: 'again', final: false, retryAt: now, now });
  const retried = (await pool.query('SELECT status, locked_until FROM subscriber_imports WHERE id = $1', [id])).rows[0];
  assert.deepEqual([retried.status, retried.locked_until.toISOString()], ['running', now.toISOString()]);
});

test('fbl: ?key=a&key=b and other repeated keys are a 401, not a 500', async () => {
  for (const url of ['/api/fbl/inbound?key=a&key=b', `/api/fbl/inbound?key=${config.fblSecret}&key=${config.fblSecret}`, '/api/fbl/inbound?key[x]=1']) {
    const res = await app.inject({ method: 'POST', url, headers: { 'content-type': 'message/rfc822' }, payload: 'From: a@b\r\n\r\nx' });
    assert.equal(res.statusCode, 401, `${url}: ${res.body}`);
    assert.equal(res.json().code, 'unauthorized');
  }
  const twoHeaders = await app.inject({ method: 'POST', url: '/api/fbl/inbound', headers: { 'content-type': 'message/rfc822', 'x-fbl-key': ['a', 'b'] }, payload: 'x' });
  assert.equal(twoHeaders.statusCode, 401);
});
