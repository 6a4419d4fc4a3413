import type { Config } from './config.js';
import type { Pool } from './db/pool.js';
import { countAccounts } from './db/queries/accounts.js';
import { createAccount } from './domain/accounts.js';
import { createApiKey } from './domain/apiKeys.js';
import { withTransaction } from './db/pool.js';

/**
 * First start on an empty database: a default account with one live and one test key, so
 * `npm start` is immediately usable. Returns the text to print (the only time the keys are
 * shown), or null when accounts already exist. Serialised by a transaction-level advisory
 * lock so two processes starting at once create one account.
 */
export async function bootstrapDefaultAccount(pool: Pool, config: Config): Promise<string | null> {
  return withTransaction(pool, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(7310004222)');
    if ((await countAccounts(tx)) > 0) return null;
    const account = await createAccount(tx, { name: 'Default' });
    const live = await createApiKey(tx, { accountId: account.id, mode: 'live', name: 'default live key' });
    const test = await createApiKey(tx, { accountId: account.id, mode: 'test', name: 'default test key' });
    return [
      '',
      'First start: created the account "Default" with two API keys (shown only this once):',
      `  account   ${account.id}`,
      `  live key  ${live.key}`,
      `  test key  ${test.key}`,
      'Try it:',
      `  curl -H "Authorization: Bearer ${live.key}" ${config.baseUrl}/api/v1/me`,
      `API docs: ${config.baseUrl}/docs`,
      '',
    ].join('\n');
  });
}
