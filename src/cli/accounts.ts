import { Option, type Command } from 'commander';
import { allAccounts, createAccount, setAccountPool, STREAMS, type Stream } from '../domain/accounts.js';
import { createApiKey, keysOfAccount, revokeKey } from '../domain/keys/api-keys.js';
import { output, table, withDatabase } from './context.js';

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--quota must be a non-negative integer, got "${v}"`);
  return n;
}

export function registerAccountCommands(program: Command): void {
  const accounts = program.command('accounts').description('Manage accounts');
  accounts
    .command('create')
    .description('Create an account')
    .requiredOption('--name <name>', 'account name')
    .option('--quota <n>', 'monthly send quota (default: unlimited)', positiveInt)
    .option('--json', 'print JSON')
    .action(async (o: { name: string; quota?: number; json?: boolean }) => {
      const account = await withDatabase(({ pool }) => createAccount(pool, { name: o.name, monthlyQuota: o.quota ?? null }));
      output(o.json, account, () => `created account ${account.id} "${account.name}" (quota: ${account.monthlyQuota ?? 'unlimited'})`);
    });
  accounts
    .command('list')
    .description('List accounts')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const list = await withDatabase(({ pool }) => allAccounts(pool));
      const rows = list.map((a) => ({ ...a, transactional: a.pools.transactional ?? 'default', broadcast: a.pools.broadcast ?? 'default' }));
      output(o.json, list, () => table(rows as never, ['id', 'name', 'monthlyQuota', 'transactional', 'broadcast', 'createdAt']));
    });
  accounts
    .command('set-pool <accountId>')
    .description("Send the account's mail through a pool of the delivery policy (docs/sending-identity.md); --pool default undoes it")
    .requiredOption('--pool <name>', 'a pool of POSTLINE_DELIVERY_POLICY, or default')
    .addOption(new Option('--stream <stream>', 'only this stream (default: both)').choices([...STREAMS]))
    .option('--json', 'print JSON')
    .action(async (accountId: string, o: { pool: string; stream?: Stream; json?: boolean }) => {
      const account = await withDatabase(({ pool, config }) => setAccountPool(pool, Object.keys(config.deliveryPolicy.identity.pools), accountId, o.pool, o.stream));
      output(o.json, account, () => `account ${account.id}: transactional mail through ${account.pools.transactional ?? 'default'}, broadcast mail through ${account.pools.broadcast ?? 'default'}`);
    });

  const keys = program.command('keys').description('Manage API keys');
  keys
    .command('create')
    .description('Create an API key; the full key is printed only this once')
    .requiredOption('--account <id>', 'account id')
    .option('--test', 'create a test key (sk_test_…): validates and renders, sends nothing')
    .option('--name <name>', 'a label for the key')
    .option('--json', 'print JSON')
    .action(async (o: { account: string; test?: boolean; name?: string; json?: boolean }) => {
      const key = await withDatabase(({ pool }) => createApiKey(pool, { accountId: o.account, mode: o.test ? 'test' : 'live', name: o.name }));
      output(o.json, { id: key.id, key: key.key, mode: key.mode }, () => `created ${key.mode} key ${key.id}\n${key.key}\n(store it now: it is not shown again)`);
    });
  keys
    .command('list')
    .description("List an account's keys (prefixes only)")
    .requiredOption('--account <id>', 'account id')
    .option('--json', 'print JSON')
    .action(async (o: { account: string; json?: boolean }) => {
      const list = await withDatabase(({ pool }) => keysOfAccount(pool, o.account));
      output(o.json, list, () => table(list as never, ['id', 'mode', 'prefix', 'name', 'createdAt', 'lastUsedAt', 'revokedAt']));
    });
  keys
    .command('revoke <keyId>')
    .description('Revoke a key; requests with it get 401 from then on')
    .option('--json', 'print JSON')
    .action(async (keyId: string, o: { json?: boolean }) => {
      const key = await withDatabase(({ pool }) => revokeKey(pool, keyId, new Date()));
      output(o.json, key, () => `revoked ${key.id} (${key.prefix}…)`);
    });
}
