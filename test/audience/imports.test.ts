import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMPORT_MAX_ROWS, runImport, runPendingImports } from '../../src/domain/audience/imports.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { allPages, client, makeList, makeSubscriber, type Json } from './helpers.js';

const { app, pool, dbUrl } = await bootApp();
const acme = await createTestAccount(pool);
const api = client(app, acme.live);

async function postCsv(csv: string, list: string, headers = acme.live) {
  const res = await app.inject({ method: 'POST', url: `/api/v1/subscribers/import?list=${list}`, headers: { ...headers, 'content-type': 'text/csv' }, payload: csv });
  return { status: res.statusCode, body: res.json() as Json, headers: res.headers };
}

test('imports: a CSV with bad rows imports the good ones and reports the bad ones by row', async () => {
  const list = await makeList(app, acme.live, { name: 'Imported' });
  await makeSubscriber(app, acme.live, { email: 'existing@example.com', name: 'Old name', attributes: { keep: 'yes' } });
  const csv = [
    'Email,Name,plan,attributes.city,status',
    'one@example.com,One,pro,Oslo,',
    'not-an-email,Broken,free,,',
    'EXISTING@example.com,New name,team,,',
    ',No email,,,',
    'two@example.com,,,"Bergen, NO",unsubscribed',
    'three@example.com,Three,,,sleeping',
    'one@example.com,One again,enterprise,,',
  ].join('\n');
  const accepted = await postCsv(csv, list);
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  assert.match(accepted.body.id, /^imp_/);
  assert.equal(accepted.body.status, 'queued');
  assert.equal(accepted.body.total, 7);
  assert.equal(accepted.body.processed, 0);
  assert.equal(accepted.headers.location, `/api/v1/imports/${accepted.body.id}`);

  assert.equal(await runPendingImports(pool), 1);
  const done = await api.get(`/api/v1/imports/${accepted.body.id}`);
  assert.equal(done.status, 200);
  assert.equal(done.body.status, 'completed');
  assert.equal(done.body.processed, 7);
  assert.equal(done.body.created, 2);
  assert.equal(done.body.updated, 2, 'the existing address and the repeated row');
  assert.equal(done.body.skipped, 3);
  assert.equal(done.body.errorCount, 3);
  assert.deepEqual(done.body.errors.map((e: Json) => e.row), [2, 4, 6]);
  assert.equal(done.body.errors[0].email, 'not-an-email');
  assert.match(done.body.errors[1].message, /email is required/);
  assert.match(done.body.errors[2].message, /status/);
  assert.ok(done.body.finishedAt >= done.body.startedAt);

  const one = (await api.get('/api/v1/subscribers/one@example.com')).body;
  assert.equal(one.name, 'One again', 'a later row of the same address wins');
  assert.deepEqual(one.attributes, { plan: 'enterprise', city: 'Oslo' });
  assert.deepEqual(one.lists, [list]);
  const existing = (await api.get('/api/v1/subscribers/existing@example.com')).body;
  assert.equal(existing.name, 'New name');
  assert.deepEqual(existing.attributes, { keep: 'yes', plan: 'team' });
  const two = (await api.get('/api/v1/subscribers/two@example.com')).body;
  assert.equal(two.status, 'unsubscribed');
  assert.equal(two.name, null);
  assert.deepEqual(two.attributes, { city: 'Bergen, NO' });
  assert.equal((await api.get(`/api/v1/lists/${list}`)).body.subscriberCount, 3);
});

test('imports: JSON rows, and csv inside a JSON body, are accepted too', async () => {
  const list = await makeList(app, acme.live);
  const json = await api.post('/api/v1/subscribers/import', {
    list,
    subscribers: [{ email: 'json1@example.com', name: 'J', attributes: { score: 7 } }, { email: 'json2@example.com', tier: 'gold' }, 'nope', { name: 'no email' }],
  });
  assert.equal(json.status, 202);
  const csv = await api.post('/api/v1/subscribers/import', { list, csv: 'email\ncsvjson@example.com\n' });
  assert.equal(csv.status, 202);
  await runPendingImports(pool);
  const done = (await api.get(`/api/v1/imports/${json.body.id}`)).body;
  assert.deepEqual([done.created, done.skipped], [2, 2]);
  assert.deepEqual(done.errors.map((e: Json) => [e.row, e.message]), [[3, 'must be an object'], [4, 'email is required']]);
  assert.deepEqual((await api.get('/api/v1/subscribers/json1@example.com')).body.attributes, { score: 7 });
  assert.deepEqual((await api.get('/api/v1/subscribers/json2@example.com')).body.attributes, { tier: 'gold' }, 'other keys become attributes');
  assert.equal((await api.get(`/api/v1/imports/${csv.body.id}`)).body.created, 1);
});

test('imports: 100,000 rows are accepted, 100,001 are refused before anything is stored', async () => {
  const list = await makeList(app, acme.live);
  const rows = (n: number) => 'email\n' + Array.from({ length: n }, (_, i) => `b${i}@x.io`).join('\n');
  const over = await postCsv(rows(IMPORT_MAX_ROWS + 1), list);
  assert.equal(over.status, 422);
  assert.match(over.body.detail, /at most 100000 rows, this one has 100001/);
  const at = await postCsv(rows(IMPORT_MAX_ROWS), list);
  assert.equal(at.status, 202);
  assert.equal(at.body.total, IMPORT_MAX_ROWS);
  const stored = await pool.query('SELECT count(*) AS n FROM subscriber_imports WHERE account_id = $1 AND total > 100000', [acme.accountId]);
  assert.equal(stored.rows[0].n, 0);
  // Not run here (the worker would take a few seconds): drop it so later tests' workers skip it.
  await pool.query('DELETE FROM subscriber_imports WHERE id = $1', [at.body.id]);
});

test('imports: structure problems are 422: no email column, no rows, unknown list, both or neither source', async () => {
  const list = await makeList(app, acme.live);
  assert.match((await postCsv('name\nBob\n', list)).body.detail, /email/);
  assert.equal((await postCsv('email\n', list)).status, 422);
  assert.equal((await postCsv('email\na@example.com\n', 'lst_00000000000000000000000000000000')).body.errors[0].field, 'list');
  assert.equal((await api.post('/api/v1/subscribers/import', { list, csv: 'email\na@b.co', subscribers: [] })).status, 422);
  assert.equal((await api.post('/api/v1/subscribers/import', { list })).status, 422);
  assert.equal((await api.post('/api/v1/subscribers/import', { list, subscribers: {} })).status, 422);
  const noList = await app.inject({ method: 'POST', url: '/api/v1/subscribers/import', headers: { ...acme.live, 'content-type': 'text/csv' }, payload: 'email\na@b.co' });
  assert.equal(noList.statusCode, 422);
});

test('imports: a worker that dies mid-import is resumed from its checkpoint without double counting', async () => {
  const list = await makeList(app, acme.live);
  const csv = 'email,n\n' + Array.from({ length: 25 }, (_, i) => `resume${i}@example.com,${i}`).join('\n');
  const accepted = await postCsv(csv, list);
  const first = await runImport(pool, { id: accepted.body.id, batchSize: 10, maxBatches: 1, workerId: 'doomed' });
  assert.equal(first?.status, 'running');
  assert.equal(first?.processed, 10);
  assert.equal(await runImport(pool, { id: accepted.body.id, workerId: 'too-early' }), null, 'the lease still holds');
  // The worker is gone; its lease runs out.
  await pool.query(`UPDATE subscriber_imports SET locked_until = now() - interval '1 second' WHERE id = $1`, [accepted.body.id]);
  const resumed = await runImport(pool, { id: accepted.body.id, batchSize: 10, workerId: 'rescuer' });
  assert.equal(resumed?.status, 'completed');
  assert.deepEqual([resumed?.processed, resumed?.created, resumed?.updated, resumed?.skipped], [25, 25, 0, 0]);
  assert.equal((await allPages(app, acme.live, `/api/v1/subscribers?list=${list}&limit=100`)).length, 25);
});

test('imports: progress is readable while the job runs', async () => {
  const list = await makeList(app, acme.live);
  const accepted = await postCsv('email\n' + Array.from({ length: 30 }, (_, i) => `prog${i}@example.com`).join('\n'), list);
  const seen: number[] = [];
  await runImport(pool, {
    id: accepted.body.id,
    batchSize: 10,
    onProgress: (p) => seen.push(p.processed),
  });
  assert.deepEqual(seen, [10, 20, 30]);
});

test('imports: into a double opt-in list, new rows are unconfirmed unless the row says active', async () => {
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const accepted = await postCsv('email,status\ndoi1@example.com,\ndoi2@example.com,Active\n', list);
  await runPendingImports(pool);
  assert.equal((await api.get(`/api/v1/imports/${accepted.body.id}`)).body.created, 2);
  assert.equal((await api.get('/api/v1/subscribers/doi1@example.com')).body.status, 'unconfirmed');
  assert.equal((await api.get('/api/v1/subscribers/doi2@example.com')).body.status, 'active');
  const queued = await pool.query(`SELECT count(*) AS n FROM subscriber_confirmations c JOIN subscribers s ON s.id = c.subscriber_id WHERE s.email = 'doi1@example.com'`);
  assert.equal(queued.rows[0].n, 1);
});

test('imports: suppressed addresses take the matching status', async () => {
  await api.post('/api/v1/suppression', { email: 'imp-complained@example.com', reason: 'complaint' });
  const list = await makeList(app, acme.live);
  await postCsv('email,status\nimp-complained@example.com,active\n', list);
  await runPendingImports(pool);
  assert.equal((await api.get('/api/v1/subscribers/imp-complained@example.com')).body.status, 'complained');
});

test('imports: a test key runs the import in a sandbox and stores nothing', async () => {
  const list = await makeList(app, acme.live);
  const res = await postCsv('email\nsandbox-imp@example.com\nbad\n', list, acme.test);
  assert.equal(res.status, 202);
  assert.equal(res.body.sandbox, true);
  assert.equal(res.body.status, 'completed');
  assert.deepEqual([res.body.created, res.body.skipped], [1, 1]);
  assert.equal((await api.get(`/api/v1/imports/${res.body.id}`)).status, 404);
  assert.equal((await api.get('/api/v1/subscribers/sandbox-imp@example.com')).status, 404);
});

test('imports: list of imports, newest first; unknown import is 404', async () => {
  const page = await api.get('/api/v1/imports?limit=2');
  assert.equal(page.status, 200);
  assert.equal(page.body.data.length, 2);
  assert.ok(page.body.data[0].id > page.body.data[1].id);
  assert.equal((await api.get('/api/v1/imports/imp_00000000000000000000000000000000')).status, 404);
});

test('cli: subscribers import FILE --list ID prints progress lines and a summary, or JSON with --json', async () => {
  const list = await makeList(app, acme.live, { name: 'Cli list' });
  const dir = mkdtempSync(join(tmpdir(), 'postline-import-'));
  const file = join(dir, 'people.csv');
  writeFileSync(file, 'email,name\n' + Array.from({ length: 1500 }, (_, i) => `cli${i}@example.com,Person ${i}`).join('\n') + '\nbroken,x\n');
  const env = { DATABASE_URL: dbUrl, POSTLINE_DATA_DIR: dir, LOG_LEVEL: 'silent' };
  const plain = await runCli(['subscribers', 'import', file, '--list', list], env);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, /progress 1000\/1501 rows/);
  assert.match(plain.stdout, /progress 1501\/1501 rows \(created 1500, updated 0, skipped 1\)/);
  assert.match(plain.stdout, /completed: 1501\/1501 rows/);
  assert.match(plain.stdout, /row 1501 \(broken\)/);

  const jsonFile = join(dir, 'people.json');
  writeFileSync(jsonFile, JSON.stringify([{ email: 'cli0@example.com', name: 'Renamed' }, { email: 'cli-new@example.com' }]));
  const json = await runCli(['subscribers', 'import', jsonFile, '--list', list, '--json'], env);
  assert.equal(json.code, 0, json.stderr);
  const result = JSON.parse(json.stdout);
  assert.equal(result.status, 'completed');
  assert.deepEqual([result.created, result.updated], [1, 1]);
  assert.equal((await api.get('/api/v1/subscribers/cli0@example.com')).body.name, 'Renamed');

  const missing = await runCli(['subscribers', 'import', file, '--list', 'lst_00000000000000000000000000000000'], env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^error: list lst_0+ not found/);
});
