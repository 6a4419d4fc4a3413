import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

const { app, pool, dbUrl } = await bootApp();
const env = { DATABASE_URL: dbUrl, POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-users-')), LOG_LEVEL: 'silent' };
const acme = await createTestAccount(pool, 'Acme');
await createTestAccount(pool, 'Other');

test('cli: users create with --password, reset-password from stdin, and --link', async () => {
  const created = await runCli(['users', 'create', '--email', 'ops@example.com', '--password', 'first passphrase', '--account', acme.accountId, '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  assert.equal(JSON.parse(created.stdout).accountId, acme.accountId);
  const several = await runCli(['users', 'create', '--email', 'x2@example.com', '--password', 'first passphrase'], env);
  assert.equal(several.code, 1);
  assert.match(several.stderr, /several accounts: pass --account/);

  const reset = await runCli(['users', 'reset-password', '--email', 'OPS@example.com'], env, 'second passphrase\n');
  assert.equal(reset.code, 0, reset.stderr);
  assert.match(reset.stdout, /password changed for ops@example.com/);
  const ok = await app.inject({ method: 'POST', url: '/api/v1/session', payload: { email: 'ops@example.com', password: 'second passphrase' } });
  assert.equal(ok.statusCode, 200);

  const stdinCreate = await runCli(['users', 'create', '--email', 'piped@example.com', '--account', acme.accountId], env, 'piped passphrase\n');
  assert.equal(stdinCreate.code, 0, stdinCreate.stderr);

  const link = await runCli(['users', 'reset-password', '--email', 'ops@example.com', '--link', '--json'], env);
  const token = /#link=(sil_\S+)$/.exec(JSON.parse(link.stdout).signInUrl)?.[1];
  assert.equal((await app.inject({ method: 'POST', url: '/api/v1/session', payload: { token } })).statusCode, 200);

  const missing = await runCli(['users', 'reset-password', '--email', 'nobody@example.com'], env, 'whatever passphrase\n');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /user nobody@example.com not found/);
  const tooShort = await runCli(['users', 'create', '--email', 'y@example.com', '--password', 'short', '--account', acme.accountId], env);
  assert.equal(tooShort.code, 1);
  assert.match(tooShort.stderr, /password: must be at least 10 characters/);
});
