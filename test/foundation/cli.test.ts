import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.js';
import { KEY_CACHE_MS } from '../../src/domain/keys/key-cache.js';
import { bootApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

// The app's clock is the test's: a key revoked by another process (the CLI) stops working
// here once the verified-key cache's window has passed (docs/api-keys.md), not at a moment
// that depends on how long the CLI took to start.
const clock = new ManualClock(new Date());
const { app, dbUrl } = await bootApp({ clock });
const env = { DATABASE_URL: dbUrl, POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-cli-')), LOG_LEVEL: 'silent' };

test('cli: accounts create, keys create/list/revoke, with --json', async () => {
  const created = await runCli(['accounts', 'create', '--name', 'Cli Co', '--quota', '1000', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const account = JSON.parse(created.stdout);
  assert.match(account.id, /^acc_/);
  assert.equal(account.monthlyQuota, 1000);

  const listed = await runCli(['accounts', 'list', '--json'], env);
  assert.ok(JSON.parse(listed.stdout).some((a: { id: string }) => a.id === account.id));
  const readable = await runCli(['accounts', 'list'], env);
  assert.match(readable.stdout, /Cli Co/);

  const key = JSON.parse((await runCli(['keys', 'create', '--account', account.id, '--json'], env)).stdout);
  assert.equal(key.mode, 'live');
  assert.match(key.key, /^sk_live_/);
  const testKey = JSON.parse((await runCli(['keys', 'create', '--account', account.id, '--test', '--name', 'ci', '--json'], env)).stdout);
  assert.equal(testKey.mode, 'test');

  const me = await app.inject({ url: '/api/v1/me', headers: { authorization: `Bearer ${key.key}` } });
  assert.equal(me.statusCode, 200);
  assert.equal(me.json().account.id, account.id);

  const keys = JSON.parse((await runCli(['keys', 'list', '--account', account.id, '--json'], env)).stdout);
  assert.equal(keys.length, 2);
  assert.ok(!JSON.stringify(keys).includes(key.key), 'lists show prefixes only');

  const revoked = await runCli(['keys', 'revoke', key.id, '--json'], env);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.ok(JSON.parse(revoked.stdout).revokedAt);
  clock.advance(KEY_CACHE_MS);
  assert.equal((await app.inject({ url: '/api/v1/me', headers: { authorization: `Bearer ${key.key}` } })).statusCode, 401);
});

test('cli: errors are one clear line and exit 1', async () => {
  const res = await runCli(['keys', 'create', '--account', 'acc_missing'], env);
  assert.equal(res.code, 1);
  assert.match(res.stderr, /^error: account acc_missing not found/);
  const bad = await runCli(['accounts', 'create', '--name', 'x', '--quota', '-5'], env);
  assert.equal(bad.code, 1);
  const cfg = await runCli(['accounts', 'list'], { ...env, POSTLINE_DELIVERY: 'pigeon' });
  assert.equal(cfg.code, 1);
  assert.match(cfg.stderr, /POSTLINE_DELIVERY/);
});
