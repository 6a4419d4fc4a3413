import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors.js';
import { isSuppressed, suppress, suppressedAmong, suppressMany, unsuppress } from '../../src/domain/suppression.js';
import { testDatabase } from '../helpers/db.js';
import { createTestAccount } from '../helpers/app.js';

const { pool } = await testDatabase();
const acme = await createTestAccount(pool);
const other = await createTestAccount(pool, 'Other');
const at = new Date('2026-11-20T10:00:00.000Z');

test('suppress: adds an entry with reason, detail and time; isSuppressed finds it in any case', async () => {
  const { entry, created } = await suppress(pool, acme.accountId, 'Bounced@Example.com', 'hard_bounce', { detail: '550 5.1.1 User unknown', bounceReason: 'user_unknown', now: at });
  assert.equal(created, true);
  assert.deepEqual({ ...entry, id: undefined }, { id: undefined, email: 'Bounced@Example.com', reason: 'hard_bounce', detail: '550 5.1.1 User unknown', bounceReason: 'user_unknown', createdAt: at.toISOString() });
  assert.deepEqual(await isSuppressed(pool, acme.accountId, 'bounced@EXAMPLE.COM'), entry);
});

test('suppress: is idempotent; the existing entry is kept unchanged', async () => {
  const first = await suppress(pool, acme.accountId, 'twice@example.com', 'unsubscribe', { now: at });
  const again = await suppress(pool, acme.accountId, 'TWICE@example.com', 'complaint', { now: new Date() });
  assert.equal(again.created, false);
  assert.deepEqual(again.entry, first.entry);
});

test('suppress: concurrent adds of one address create exactly one entry', async () => {
  const results = await Promise.all(Array.from({ length: 8 }, () => suppress(pool, acme.accountId, 'race@example.com', 'complaint')));
  assert.equal(results.filter((r) => r.created).length, 1);
  assert.equal(new Set(results.map((r) => r.entry.id)).size, 1);
});

test('suppress: an invalid address or reason throws validation_failed', async () => {
  await assert.rejects(suppress(pool, acme.accountId, 'not an address', 'manual'), (e: unknown) => e instanceof AppError && e.code === 'validation_failed');
  await assert.rejects(suppress(pool, acme.accountId, 'ok@example.com', 'spam' as never), (e: unknown) => e instanceof AppError && e.code === 'validation_failed');
});

test('isSuppressed: null for an address not on the list, for an unparseable one, and for another account', async () => {
  assert.equal(await isSuppressed(pool, acme.accountId, 'clean@example.com'), null);
  assert.equal(await isSuppressed(pool, acme.accountId, 'garbage'), null);
  assert.equal(await isSuppressed(pool, other.accountId, 'bounced@example.com'), null);
});

test('unsuppress: removes and returns the entry; null when absent; only for that account', async () => {
  await suppress(pool, acme.accountId, 'gone@example.com', 'manual');
  await suppress(pool, other.accountId, 'gone@example.com', 'manual');
  const removed = await unsuppress(pool, acme.accountId, 'GONE@example.com');
  assert.equal(removed?.email, 'gone@example.com');
  assert.equal(await isSuppressed(pool, acme.accountId, 'gone@example.com'), null);
  assert.notEqual(await isSuppressed(pool, other.accountId, 'gone@example.com'), null);
  assert.equal(await unsuppress(pool, acme.accountId, 'gone@example.com'), null);
});

test('suppressedAmong: maps each suppressed address, as passed, to its entry in one call', async () => {
  await suppressMany(pool, acme.accountId, [{ email: 'm1@among.example' }, { email: 'm2@among.example', reason: 'complaint' }]);
  const found = await suppressedAmong(pool, acme.accountId, ['M1@among.example', 'free@among.example', 'm2@AMONG.example', 'junk', 'm1@among.example']);
  assert.deepEqual([...found.keys()].sort(), ['M1@among.example', 'm1@among.example', 'm2@AMONG.example']);
  assert.equal(found.get('m2@AMONG.example')?.reason, 'complaint');
  assert.equal((await suppressedAmong(pool, acme.accountId, [])).size, 0);
});

test('suppressMany: more than 10,000 entries throws before touching the database', async () => {
  const entries = Array.from({ length: 10_001 }, (_, i) => ({ email: `u${i}@many.example` }));
  await assert.rejects(suppressMany(pool, acme.accountId, entries), (e: unknown) => e instanceof AppError && e.code === 'validation_failed');
});
