import { after } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ManualClock, systemClock, type Clock } from '../../src/clock.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Pool } from '../../src/db/pool.js';
import { createAccount } from '../../src/domain/accounts.js';
import { createApiKey } from '../../src/domain/keys/api-keys.js';
import { buildApp } from '../../src/http/app.js';
import { testDatabase } from './db.js';

export interface TestApp {
  app: FastifyInstance;
  pool: Pool;
  config: Config;
  clock: Clock;
  dbUrl: string;
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-app-')),
    POSTLINE_SECRET: 'test-secret-0123456789abcdef',
    POSTLINE_FBL_SECRET: 'fbl_test-secret-0123456789',
    POSTLINE_DELIVERY: 'capture',
    POSTLINE_WEBHOOK_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    ...env,
  });
}

/**
 * Boots the production app on a fresh database of its own. Pass `clock: new ManualClock()`
 * to control time; `setup` may register extra test-only routes before the app is ready.
 */
export async function bootApp(
  opts: { clock?: Clock; env?: Record<string, string>; pool?: Pool; dbUrl?: string; setup?: (app: FastifyInstance) => void } = {},
): Promise<TestApp> {
  let pool = opts.pool;
  let dbUrl = opts.dbUrl ?? '';
  if (!pool) {
    const db = await testDatabase();
    pool = db.pool;
    dbUrl = db.url;
  }
  const config = testConfig({ ...(dbUrl ? { DATABASE_URL: dbUrl } : {}), ...opts.env });
  const clock = opts.clock ?? systemClock;
  const quiet = (process.env.LOG_LEVEL ?? 'silent') === 'silent';
  const app = await buildApp({ config, pool, clock }, { logger: !quiet });
  opts.setup?.(app);
  await app.ready();
  after(() => app.close());
  return { app, pool, config, clock, dbUrl };
}

export interface TestAccount {
  accountId: string;
  liveKey: string;
  testKey: string;
  live: Record<string, string>;
  test: Record<string, string>;
}

/** An account with one live and one test key, and ready-made auth headers for each. */
export async function createTestAccount(pool: Pool, name = 'Acme', monthlyQuota: number | null = null): Promise<TestAccount> {
  const account = await createAccount(pool, { name, monthlyQuota });
  const live = await createApiKey(pool, { accountId: account.id, mode: 'live' });
  const test = await createApiKey(pool, { accountId: account.id, mode: 'test' });
  return {
    accountId: account.id,
    liveKey: live.key,
    testKey: test.key,
    live: { authorization: `Bearer ${live.key}` },
    test: { authorization: `Bearer ${test.key}` },
  };
}

export { ManualClock };
