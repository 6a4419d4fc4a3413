import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { runCampaignStep } from '../../src/domain/campaigns/runner.js';
import { DeliveryEngine } from '../../src/delivery/engine.js';
import { CampaignRenderer } from '../../src/domain/campaigns/content.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { CLI, runCli } from '../helpers/cli.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { seedList } from './helpers.js';

test('cli: campaigns create, send, report --watch shows live progress until sent, list', { timeout: 300_000 }, async () => {
  const { app, pool, config, dbUrl, clock } = await bootApp();
  const acme = await createTestAccount(pool);
  await createVerifiedDomain(pool, acme.accountId, 'acme.test', config.secret);
  const listId = await seedList(app, pool, acme.live, acme.accountId, { count: 5, domain: 'example.net' });
  const dir = mkdtempSync(join(tmpdir(), 'postline-cmp-'));
  writeFileSync(join(dir, 'body.html'), '<p>Hi {{ subscriber.name | there }}</p>');
  const env = { DATABASE_URL: dbUrl, POSTLINE_DATA_DIR: dir, LOG_LEVEL: 'silent' };

  const created = await runCli(['campaigns', 'create', '--account', acme.accountId, '--name', 'Cli news', '--from', 'news@acme.test',
    '--subject', 'Hello', '--html-file', join(dir, 'body.html'), '--list', listId, '--tag', 'cli', '--json'], env);
  assert.equal(created.code, 0, created.stderr);
  const c = JSON.parse(created.stdout);
  assert.equal(c.status, 'draft');
  assert.deepEqual(c.tags, ['cli']);

  const sent = await runCli(['campaigns', 'send', c.id], env);
  assert.equal(sent.stdout.trim(), `${c.id} sending`);

  // --watch follows the campaign while a worker sends it (here: this process).
  const watcher = spawn(process.execPath, ['--import', 'tsx', CLI, 'campaigns', 'report', c.id, '--watch'], { env: { ...process.env, ...env } });
  let out = '';
  watcher.stdout.on('data', (d) => (out += d));
  watcher.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number>((resolve) => watcher.on('exit', (code) => resolve(code ?? 1)));
  while (!/progress 0%/.test(out)) await new Promise((r) => setTimeout(r, 200));
  await runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => null });
  const engine = new DeliveryEngine({ pool, config, clock, log: pino({ level: 'silent' }), content: (links) => new CampaignRenderer(pool, links) });
  while ((await engine.runOnce()) > 0);
  await engine.close();
  await runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => null });
  assert.equal(await exited, 0, out);
  assert.match(out, /progress 0% 0\/5 delivered 0 bounced 0 sending/);
  assert.match(out, /progress 100% 5\/5 delivered 5 bounced 0 sent/);
  assert.match(out, /delivery\s+sent 5\s+delivered 5/);

  // One more process: list, and an invalid transition as one error line (exit 1).
  const listed = await runCli(['campaigns', 'list', '--account', acme.accountId, '--status', 'sent'], env);
  assert.match(listed.stdout, new RegExp(`${c.id}\\s+Cli news\\s+sent`));

});
