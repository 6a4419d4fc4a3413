import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);
const json = { ...acme.live, 'content-type': 'application/json' };

const bulk = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/v1/suppression', headers: json, payload });
const count = async (like = '%') =>
  (await pool.query('SELECT count(*)::int AS n FROM suppressions WHERE account_id = $1 AND email_key LIKE $2', [acme.accountId, like])).rows[0].n as number;
const reasonOf = async (key: string) =>
  (await pool.query('SELECT reason FROM suppressions WHERE account_id = $1 AND email_key = $2', [acme.accountId, key])).rows[0]?.reason;

test('bulk: 200 with counts of created and existing (already listed, or repeated in the batch)', async () => {
  await bulk({ email: 'old@bulk.example' });
  const res = await bulk({ entries: [{ email: 'new1@bulk.example' }, { email: 'OLD@bulk.example' }, { email: 'new2@bulk.example', reason: 'complaint' }, { email: 'New1@Bulk.example' }] });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { created: 2, existing: 2 });
  assert.equal(await count('%@bulk.example'), 3);
  assert.equal(await reasonOf('new2@bulk.example'), 'complaint');
  assert.equal(await reasonOf('old@bulk.example'), 'manual', 'an existing entry is kept as it was');
});

test('bulk: an entry without reason takes the top-level reason, else manual', async () => {
  await bulk({ reason: 'import', entries: [{ email: 'a@imp.example' }, { email: 'b@imp.example', reason: 'unsubscribe' }] });
  assert.equal(await reasonOf('a@imp.example'), 'import');
  assert.equal(await reasonOf('b@imp.example'), 'unsubscribe');
  await bulk({ entries: [{ email: 'c@imp.example' }] });
  assert.equal(await reasonOf('c@imp.example'), 'manual');
});

test('bulk: one invalid address refuses the whole batch, naming each bad entry by index', async () => {
  const before = await count();
  const res = await bulk({ entries: [{ email: 'fine@atomic.example' }, { email: 'nope' }, { email: 'also@fine.example' }, { email: 'x@@y.example' }] });
  assert.equal(res.statusCode, 422);
  const body = res.json();
  assert.equal(body.code, 'validation_failed');
  assert.deepEqual(body.errors.map((e: { field: string }) => e.field), ['entries.1.email', 'entries.3.email']);
  assert.equal(await count(), before, 'nothing was added');
});

test('bulk: an unknown reason in an entry is 422 naming the entry', async () => {
  const res = await bulk({ entries: [{ email: 'r@x.example' }, { email: 's@x.example', reason: 'spam' }] });
  assert.equal(res.statusCode, 422);
  assert.ok(res.json().errors.some((e: { field: string }) => e.field.startsWith('entries.1.reason')), res.body);
});

test('bulk: an empty entries array is 422', async () => {
  assert.equal((await bulk({ entries: [] })).statusCode, 422);
});

test('bulk: 10,000 entries are added in one call', async () => {
  const entries = Array.from({ length: 10_000 }, (_, i) => ({ email: `user${i}@tenk.example` }));
  const res = await bulk({ entries });
  assert.equal(res.statusCode, 200, res.body.slice(0, 300));
  assert.deepEqual(res.json(), { created: 10_000, existing: 0 });
  assert.equal(await count('%@tenk.example'), 10_000);
  const again = await bulk({ entries });
  assert.deepEqual(again.json(), { created: 0, existing: 10_000 });
});

test('bulk: 10,001 entries are 422 and nothing is added', async () => {
  const entries = Array.from({ length: 10_001 }, (_, i) => ({ email: `user${i}@over.example` }));
  const res = await bulk({ entries });
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().code, 'validation_failed');
  assert.equal(res.json().errors[0].field, 'entries');
  assert.equal(await count('%@over.example'), 0);
});

test('bulk: many invalid entries list the first 100 errors and say how many there are', async () => {
  const entries = Array.from({ length: 150 }, (_, i) => ({ email: `bad${i}` }));
  const res = await bulk({ entries });
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().errors.length, 100);
  assert.equal(res.json().detail, '150 invalid entries, nothing was added (first 100 of 150 errors listed)');
});

test('bulk: two overlapping batches at once both succeed and add each address once', async () => {
  const a = Array.from({ length: 2000 }, (_, i) => ({ email: `p${i}@race.example` }));
  const b = [...a].reverse().map((e) => ({ email: e.email.toUpperCase() }));
  const [ra, rb] = await Promise.all([bulk({ entries: a }), bulk({ entries: b })]);
  assert.equal(ra.statusCode, 200, ra.body.slice(0, 200));
  assert.equal(rb.statusCode, 200, rb.body.slice(0, 200));
  assert.equal(ra.json().created + rb.json().created, 2000);
  assert.equal(await count('%@race.example'), 2000);
});
