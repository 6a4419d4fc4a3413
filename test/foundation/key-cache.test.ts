import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey, revokeKey } from '../../src/domain/keys/api-keys.js';
import { KEY_CACHE_MS } from '../../src/domain/keys/key-cache.js';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';

// Verified keys are trusted per process for KEY_CACHE_MS. Two app instances on one
// database stand for two API processes; the clock is moved, never slept through.
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const first = await bootApp({ clock });
const second = await bootApp({ clock, pool: first.pool, dbUrl: first.dbUrl });
const me = (app = first.app, headers: Record<string, string>) => app.inject({ url: '/api/v1/me', headers });

test('key cache: a key revoked by another process is accepted until the window ends, then refused', async () => {
  clock.set('2026-11-20T10:00:01.000Z');
  const acc = await createTestAccount(first.pool, 'Revoked elsewhere');
  const keyId = (await me(first.app, acc.live)).json().key.id;
  // The CLI (another process) revokes it: nothing tells this process.
  await revokeKey(first.pool, keyId, clock.now());
  clock.advance(KEY_CACHE_MS - 1);
  assert.equal((await me(first.app, acc.live)).statusCode, 200, 'still trusted within the window');
  clock.advance(1);
  const res = await me(first.app, acc.live);
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().code, 'unauthorized');
});

test('key cache: revoked through one API process, refused there at once and by the other within the window', async () => {
  clock.set('2026-11-20T10:01:01.000Z');
  const acc = await createTestAccount(first.pool, 'Revoked here');
  const keyId = (await me(first.app, acc.live)).json().key.id;
  assert.equal((await me(second.app, acc.live)).statusCode, 200);
  assert.equal((await first.app.inject({ method: 'DELETE', url: `/api/v1/keys/${keyId}`, headers: acc.live })).statusCode, 200);
  assert.equal((await me(first.app, acc.live)).statusCode, 401, 'the revoking process forgets it at once');
  assert.equal((await me(second.app, acc.live)).statusCode, 200, 'the other one trusts it until its entry is older than the window');
  clock.advance(KEY_CACHE_MS);
  assert.equal((await me(second.app, acc.live)).statusCode, 401);
});

test('key cache: a test key revoking a key changes nothing and forgets nothing', async () => {
  clock.set('2026-11-20T10:02:01.000Z');
  const acc = await createTestAccount(first.pool, 'Sandboxed');
  const keyId = (await me(first.app, acc.live)).json().key.id;
  const res = await first.app.inject({ method: 'DELETE', url: `/api/v1/keys/${keyId}`, headers: acc.test });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().sandbox, true);
  clock.advance(KEY_CACHE_MS);
  assert.equal((await me(first.app, acc.live)).statusCode, 200);
});

test('key cache: unknown keys are not remembered, so a key is accepted as soon as it exists', async () => {
  clock.set('2026-11-20T10:03:01.000Z');
  const acc = await createTestAccount(first.pool, 'Fresh');
  const unknown = { authorization: `Bearer sk_live_${'B'.repeat(43)}` };
  for (let i = 0; i < 3; i++) assert.equal((await me(first.app, unknown)).statusCode, 401);
  const created = await createApiKey(first.pool, { accountId: acc.accountId, mode: 'live' });
  assert.equal((await me(first.app, { authorization: `Bearer ${created.key}` })).statusCode, 200, 'no waiting for a window');
});

test('key cache: cached keys are still counted in the shared window, exactly, across both processes', async () => {
  clock.set('2026-11-20T10:04:01.000Z');
  const acc = await createTestAccount(first.pool, 'Counted');
  // Concurrent requests through both processes: the group-committed counts hand out every rank once.
  const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => me(i % 2 ? first.app : second.app, acc.test)));
  const remaining = responses.map((r) => Number(r.headers['ratelimit-remaining'])).sort((a, b) => a - b);
  assert.deepEqual(remaining, Array.from({ length: 40 }, (_, i) => 80 + i));
  const { rows } = await first.pool.query('SELECT count FROM rate_limit_windows WHERE bucket = $1', [`${acc.accountId}:test`]);
  assert.deepEqual(rows.map((r) => r.count), [40]);
});

test('key cache: an account change by another process (its name here) applies within the window', async () => {
  clock.set('2026-11-20T10:05:01.000Z');
  const acc = await createTestAccount(first.pool, 'Quota');
  assert.equal((await me(first.app, acc.live)).statusCode, 200);
  await first.pool.query('UPDATE accounts SET name = $2 WHERE id = $1', [acc.accountId, 'Quota renamed']);
  assert.equal((await me(first.app, acc.live)).json().account.name, 'Quota');
  clock.advance(KEY_CACHE_MS);
  assert.equal((await me(first.app, acc.live)).json().account.name, 'Quota renamed');
});
