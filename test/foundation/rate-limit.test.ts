import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey } from '../../src/domain/keys/api-keys.js';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const first = await bootApp({ clock });
// A second app instance on the same database: the limit must be shared between them.
const second = await bootApp({ clock, pool: first.pool, dbUrl: first.dbUrl });

async function burn(headers: Record<string, string>, n: number, apps = [first.app, second.app]): Promise<void> {
  for (let i = 0; i < n; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, n - i) }, (_, j) => apps[(i + j) % apps.length].inject({ url: '/api/v1/me', headers })),
    );
  }
}

test('rate limit: 600th live request passes, 601st is 429 across two API instances', async () => {
  clock.set('2026-11-20T10:00:10.000Z');
  const acc = await createTestAccount(first.pool, 'Busy');
  await burn(acc.live, 599);
  const r600 = await first.app.inject({ url: '/api/v1/me', headers: acc.live });
  assert.equal(r600.statusCode, 200);
  assert.equal(r600.headers['ratelimit-limit'], '600');
  assert.equal(r600.headers['ratelimit-remaining'], '0');
  assert.equal(r600.headers['ratelimit-reset'], '50');
  const r601 = await second.app.inject({ url: '/api/v1/me', headers: acc.live });
  assert.equal(r601.statusCode, 429);
  assert.equal(r601.json().code, 'rate_limited');
  assert.equal(r601.headers['retry-after'], '50');
});

test('rate limit: the window resets after the minute', async () => {
  clock.set('2026-11-20T10:01:00.000Z');
  const acc = await createTestAccount(first.pool, 'Reset');
  await burn(acc.live, 600);
  assert.equal((await first.app.inject({ url: '/api/v1/me', headers: acc.live })).statusCode, 429);
  clock.advance(60_000);
  const res = await first.app.inject({ url: '/api/v1/me', headers: acc.live });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['ratelimit-remaining'], '599');
});

test('rate limit: test keys share 120/min per account, separate from live keys', async () => {
  clock.set('2026-11-20T10:03:00.000Z');
  const acc = await createTestAccount(first.pool, 'Tester');
  const another = await createApiKey(first.pool, { accountId: acc.accountId, mode: 'test' });
  await burn(acc.test, 60);
  await burn({ authorization: `Bearer ${another.key}` }, 59);
  const r120 = await first.app.inject({ url: '/api/v1/me', headers: acc.test });
  assert.equal(r120.statusCode, 200);
  assert.equal(r120.headers['ratelimit-limit'], '120');
  const r121 = await first.app.inject({ url: '/api/v1/me', headers: { 'x-api-key': another.key } });
  assert.equal(r121.statusCode, 429);
  const live = await first.app.inject({ url: '/api/v1/me', headers: acc.live });
  assert.equal(live.statusCode, 200, 'live keys have their own budget');
});

test('rate limit: accounts do not share a budget', async () => {
  clock.set('2026-11-20T10:05:00.000Z');
  const a = await createTestAccount(first.pool, 'A');
  const b = await createTestAccount(first.pool, 'B');
  await burn(a.test, 121);
  assert.equal((await first.app.inject({ url: '/api/v1/me', headers: a.test })).statusCode, 429);
  assert.equal((await first.app.inject({ url: '/api/v1/me', headers: b.test })).statusCode, 200);
});
