import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, startCli } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';

/**
 * Where the first-start keys go when several processes share one DATABASE_URL
 * (docs/deploy.md, "First start"): no `api` or `worker` process creates an account, whichever
 * starts first; `postline init` creates it once and prints the keys to whoever ran it.
 */
const db = await testDatabase();
const env = () => ({
  DATABASE_URL: db.url, POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-first-')), PORT: '0', POSTLINE_SMTP_PORT: '0',
  POSTLINE_SECRET: 'test-secret-0123456789abcdef', LOG_LEVEL: 'warn', NODE_OPTIONS: '',
});

const children: import('node:child_process').ChildProcess[] = [];
// The runner ends a file that overruns its time with SIGTERM, before `finally` runs: no orphans.
process.once('SIGTERM', () => {
  children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
  process.exit(1);
});

test('first start on a shared database: two processes start at once, neither prints keys; postline init does, once', { timeout: 120_000 }, async () => {
  const started = await Promise.all([startCli(['start', '--role', 'api'], env(), /postline ready/), startCli(['start', '--role', 'worker'], env(), /postline ready/)]);
  children.push(...started.map((s) => s.child));
  try {
    for (const s of started) {
      assert.doesNotMatch(s.output(), /First start|sk_live_/);
      assert.match(s.output(), /run `postline init` once/);
    }
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM accounts');
    assert.equal(rows[0].n, 0);

    const init = await runCli(['init'], env());
    assert.equal(init.code, 0, init.stderr);
    const key = /live key\s+(sk_live_\S+)/.exec(init.stdout)?.[1];
    assert.ok(key, init.stdout);
    const port = Number(/listening on port (\d+)/.exec(started[0].output())?.[1]);
    const me = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(me.status, 200);

    const again = await runCli(['init'], env());
    assert.equal(again.code, 0);
    assert.match(again.stdout, /already initialised/);
    assert.doesNotMatch(again.stdout, /sk_live_/);
  } finally {
    for (const s of started) s.child.kill('SIGTERM');
    await Promise.all(started.map((s) => new Promise((r) => s.child.once('exit', r))));
  }
});
