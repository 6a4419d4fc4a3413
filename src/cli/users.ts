import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { allAccounts } from '../domain/accounts.js';
import { createSignInLink, createUser, resetPassword, signInLinkUrl, userByEmail } from '../domain/users/users.js';
import { output, withDatabase } from './context.js';

/** The password from --password, else the first line of stdin (piped, or typed at a prompt). */
async function passwordFrom(option: string | undefined): Promise<string> {
  if (option !== undefined) return option;
  if (process.stdin.isTTY) process.stderr.write('Password: ');
  const rl = createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    rl.close();
    return line.replace(/\r$/, '');
  }
  throw new Error('no password given: pass --password P or write it to standard input');
}

/** The only account, when --account is omitted; more than one needs the flag. */
export async function defaultAccount(pool: Parameters<typeof allAccounts>[0]): Promise<string> {
  const accounts = await allAccounts(pool);
  if (accounts.length === 1) return accounts[0].id;
  throw new Error(accounts.length === 0 ? 'there is no account yet: create one with `postline accounts create`' : 'there are several accounts: pass --account ID');
}

export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('Manage dashboard users (people who sign in with email and password)');
  users
    .command('create')
    .description('Create a user of an account; the password comes from --password or standard input')
    .requiredOption('--email <email>', 'the address the user signs in with')
    .option('--password <password>', 'the password (else read from standard input)')
    .option('--account <id>', 'account id (default: the only account)')
    .option('--json', 'print JSON')
    .action(async (o: { email: string; password?: string; account?: string; json?: boolean }) => {
      const password = await passwordFrom(o.password);
      const user = await withDatabase(async ({ pool }) =>
        createUser(pool, { accountId: o.account ?? (await defaultAccount(pool)), email: o.email, password }, new Date()));
      output(o.json, user, () => `created user ${user.id} ${user.email} in account ${user.accountId}`);
    });
  users
    .command('reset-password')
    .description('Set a new password (from --password or standard input), or print a one-time sign-in link with --link; ends the user\'s sessions')
    .requiredOption('--email <email>', 'the user\'s address')
    .option('--password <password>', 'the new password (else read from standard input)')
    .option('--link', 'print a one-time sign-in link (valid 24 hours) instead of setting a password')
    .option('--json', 'print JSON')
    .action(async (o: { email: string; password?: string; link?: boolean; json?: boolean }) => {
      if (o.link) {
        const r = await withDatabase(async ({ pool, config }) => {
          const user = await userByEmail(pool, o.email);
          const link = await createSignInLink(pool, user.id, new Date());
          return { user, url: signInLinkUrl(config.baseUrl, link.token), expiresAt: link.expiresAt.toISOString() };
        });
        output(o.json, { userId: r.user.id, email: r.user.email, signInUrl: r.url, expiresAt: r.expiresAt }, () => `one-time sign-in link for ${r.user.email} (valid until ${r.expiresAt}):\n${r.url}`);
        return;
      }
      const password = await passwordFrom(o.password);
      const user = await withDatabase(({ pool }) => resetPassword(pool, o.email, password, new Date()));
      output(o.json, user, () => `password changed for ${user.email}; their sessions have ended`);
    });
}
