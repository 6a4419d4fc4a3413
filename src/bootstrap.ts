import type { Config } from './config.js';
import type { Pool } from './db/pool.js';
import { countAccounts } from './db/queries/accounts.js';
import { createAccount } from './domain/accounts.js';
import { createApiKey } from './domain/keys/api-keys.js';
import { withTransaction } from './db/pool.js';
import { createSignInLink, createUser, signInLinkUrl } from './domain/users/users.js';

/** The first user; the owner changes the address (and sets a password) in Settings → Account. */
export const OWNER_EMAIL = 'owner@postline.localhost';

/**
 * First start on an empty database: a default account with one live and one test key and an
 * owner user with a one-time dashboard sign-in link, so `npm start` is immediately usable. Returns the text to print (the only time the keys are
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
    const owner = await createUser(tx, { accountId: account.id, email: OWNER_EMAIL }, new Date());
    const link = await createSignInLink(tx, owner.id, new Date());
    const dashboard = config.baseUrl.replace(/\/$/, '') + '/';
    return [
      '',
      'First start: created the account "Default" with two API keys (shown only this once):',
      `  account   ${account.id}`,
      `  live key  ${live.key}`,
      `  test key  ${test.key}`,
      'Try it:',
      `  curl -H "Authorization: Bearer ${live.key}" ${config.baseUrl}/api/v1/me`,
      `API docs: ${config.baseUrl}/docs`,
      `Dashboard: ${dashboard}`,
      `  sign in once with ${signInLinkUrl(config.baseUrl, link.token)}`,
      `  (one-time link for the owner ${owner.email}, valid 24 hours; then set your email and password in Settings → Account,`,
      `   or run: postline users reset-password --email ${owner.email})`,
      '',
    ].join('\n');
  });
}
