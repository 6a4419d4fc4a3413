import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, readPostmaster } from '../../src/db/embedded.js';
import { runCli, startCli } from '../helpers/cli.js';

function postgresPids(dataDir: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', `postgres -D ${dataDir}/pg`]).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function waitFor(cond: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'postline-embedded-'));
after(() => {
  for (const pid of postgresPids(dataDir)) process.kill(pid, 'SIGKILL');
});

test('embedded: start creates a default account and prints working keys; restart keeps them; kill -9 recovers; SIGINT leaves no postgres', { timeout: 120_000 }, async () => {
  const port = await freePort();
  const env = { POSTLINE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: '', POSTLINE_SMTP_PORT: '0' };

  const first = await startCli(['start'], env, /postline ready/);
  after(() => { first.child.kill('SIGKILL'); });
  const key = /live key\s+(sk_live_\S+)/.exec(first.output())![1];
  const me = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(me.status, 200);

  // CLI beside the running server reaches the same embedded PostgreSQL.
  const listed = await runCli(['accounts', 'list', '--json'], env);
  assert.equal(JSON.parse(listed.stdout).length, 1);

  // Crash: the server dies hard; its postgres child is orphaned.
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));
  assert.equal(postgresPids(dataDir).length > 0, true, 'postgres survives its parent');

  const second = await startCli(['start'], env, /postline ready/);
  after(() => { second.child.kill('SIGKILL'); });
  assert.doesNotMatch(second.output(), /First start/, 'no second default account');
  const again = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: { 'x-api-key': key } });
  assert.equal(again.status, 200);

  second.child.kill('SIGINT');
  await new Promise((r) => second.child.once('exit', r));
  await waitFor(() => postgresPids(dataDir).length === 0);

  // A stale postmaster.pid (postgres itself killed -9) doesn't block the next start.
  const third = await startCli(['start'], env, /postline ready/);
  after(() => { third.child.kill('SIGKILL'); });
  const pm = readPostmaster(join(dataDir, 'pg'));
  assert.ok(pm && pm !== 'stale');
  process.kill(pm.pid, 'SIGKILL');
  third.child.kill('SIGKILL');
  await waitFor(() => postgresPids(dataDir).length === 0);
  assert.equal(readPostmaster(join(dataDir, 'pg')), 'stale');
  const fourth = await startCli(['start'], env, /postline ready/);
  after(() => { fourth.child.kill('SIGKILL'); });
  const last = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: { 'x-api-key': key } });
  assert.equal(last.status, 200);
  fourth.child.kill('SIGTERM');
  await new Promise((r) => fourth.child.once('exit', r));
  await waitFor(() => postgresPids(dataDir).length === 0);
  assert.match(readFileSync(join(dataDir, 'pg', 'PG_VERSION'), 'utf8'), /^\d+/);
});
