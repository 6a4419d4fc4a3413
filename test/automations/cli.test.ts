import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { makeAutomation, client } from './helpers.js';

const { app, pool, dbUrl } = await bootApp();
const acme = await createTestAccount(pool);
const api = client(app, acme.live);
const env = { DATABASE_URL: dbUrl, POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-cli-')), POSTLINE_SECRET: 'cli-test-secret-0123456789', LOG_LEVEL: 'silent' };

test('cli: automations trigger starts runs with --data, list shows counters, runs lists them', async () => {
  const a = await makeAutomation(api, {
    name: 'Cart reminder',
    trigger: { event: 'cart.abandoned', filter: { conditions: [{ field: 'data.total', op: 'gt', value: 10 }] } },
    steps: [{ type: 'wait', until: { event: 'purchase', timeout: '1d' } }],
  });
  const trig = await runCli(['automations', 'trigger', 'cart.abandoned', 'ada@example.com', '--account', acme.accountId, '--data', '{"total": 42}', '--json'], env);
  assert.equal(trig.code, 0, trig.stderr);
  const result = JSON.parse(trig.stdout);
  assert.equal(result.runs.length, 1);
  assert.equal(result.runs[0].automationId, a.id);
  const runId = result.runs[0].id;

  // One account in this database: --account may be left out, as in the issue's `postline automations list`.
  const list = await runCli(['automations', 'list'], env);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`${a.id}\\s+Cart reminder\\s+active\\s+cart.abandoned\\s+1\\s+1\\s+0`));

  const readableRuns = await runCli(['automations', 'runs', a.id, '--status', 'active'], env);
  assert.match(readableRuns.stdout, new RegExp(`${runId}\\s+ada@example.com\\s+active`));
});

// Each CLI start costs seconds on a busy machine: one call per error path that matters most.
test('cli: bad --data is a one-line error', async () => {
  const bad = await runCli(['automations', 'trigger', 'x', 'a@example.com', '--account', acme.accountId, '--data', '{nope'], env);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^error: --data is not valid JSON/);
});
