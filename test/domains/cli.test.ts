import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../../src/domain/accounts.js';
import { createDomain, findSendingDomain, type Domain } from '../../src/domain/domains/domains.js';
import { bootApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { startDnsServer } from '../helpers/dns-server.js';

const dns = await startDnsServer();
after(() => dns.close());
const { pool, dbUrl } = await bootApp();
const env = {
  DATABASE_URL: dbUrl,
  POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-cli-')),
  POSTLINE_SECRET: 'cli-test-secret-0123456789',
  POSTLINE_BASE_URL: 'https://mail.postline.test',
  POSTLINE_DNS_SERVERS: dns.address,
  LOG_LEVEL: 'silent',
};
const account = await createAccount(pool, { name: 'Cli Domains' });

interface CliRecord { purpose: string; type: string; name: string; value: string; status: string }

// Spawning the CLI costs seconds on a busy machine: domains not under test are added directly.
const addDirect = (name: string): Promise<Domain> =>
  createDomain(pool, { accountId: account.id, name, now: new Date() }, { secret: env.POSTLINE_SECRET, targets: { returnPathHost: 'mail.postline.test', trackingHost: 'mail.postline.test' } });

test('cli: domains add prints the records to publish (--json and readable)', async () => {
  const res = await runCli(['domains', 'add', '--account', account.id, 'Cli-Add.example.test', '--json'], env);
  assert.equal(res.code, 0, res.stderr);
  const d = JSON.parse(res.stdout);
  assert.match(d.id, /^dom_/);
  assert.equal(d.name, 'cli-add.example.test');
  assert.equal(d.status, 'pending');
  assert.equal(d.records.length, 6);
  assert.ok(!res.stdout.includes('PRIVATE'));

  const readable = await runCli(['domains', 'add', '--account', account.id, 'cli-readable.example.test'], env);
  assert.equal(readable.code, 0, readable.stderr);
  assert.match(readable.stdout, /postline domains verify dom_/);
  assert.match(readable.stdout, /plr-[0-9a-f]{8}\._domainkey\.cli-readable\.example\.test/);
  assert.match(readable.stdout, /bounces\.cli-readable\.example\.test.*10 mail\.postline\.test/);
});

test('cli: domains add refuses a bad name or an unknown account with one error line', async () => {
  const bad = await runCli(['domains', 'add', '--account', account.id, 'localhost'], env);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^error: name: must have at least two labels/);
  const nobody = await runCli(['domains', 'add', '--account', 'acc_missing', 'x.example.test'], env);
  assert.equal(nobody.code, 1);
  assert.match(nobody.stderr, /^error: account acc_missing not found/);
});

test('cli: domains verify checks DNS and prints each record status', async () => {
  const d = await addDirect('cli-verify.example.test');
  const missing = await runCli(['domains', 'verify', d.id, '--json'], env);
  assert.equal(missing.code, 0, missing.stderr);
  assert.equal(JSON.parse(missing.stdout).status, 'pending');
  assert.ok(JSON.parse(missing.stdout).records.every((r: CliRecord) => r.status === 'missing'));

  const dkim = d.records.find((r) => r.purpose === 'dkim')!;
  dns.setRecords(dkim.name, 'TXT', [dkim.value]);
  const ok = await runCli(['domains', 'verify', d.id, '--json'], env);
  const v = JSON.parse(ok.stdout);
  assert.equal(v.status, 'verified');
  assert.equal(v.records.find((r: CliRecord) => r.purpose === 'dkim').status, 'verified');
  assert.equal(ok.stderr, '', 'no warning without --force');

  const readable = await runCli(['domains', 'verify', d.id], env);
  assert.match(readable.stdout, /cli-verify\.example\.test\s+verified/);
  assert.match(readable.stdout, /dkim \(required\)\s+TXT\s+\S+\s+verified/);
  assert.match(readable.stdout, /spf: no SPF/);
});

test('cli: domains verify --force marks verified without DNS and warns loudly on stderr', async () => {
  const d = await addDirect('cli-force.example.test');
  const res = await runCli(['domains', 'verify', d.id, '--force', '--json'], env);
  assert.equal(res.code, 0, res.stderr);
  const v = JSON.parse(res.stdout);
  assert.equal(v.status, 'verified');
  assert.ok(v.verifiedAt);
  assert.ok(v.records.every((r: CliRecord) => r.status === 'pending'), 'no DNS was consulted');
  assert.match(res.stderr, /WARNING: .*cli-force\.example\.test.*VERIFIED WITHOUT CHECKING DNS/);
  assert.equal(dns.queryCount(d.records[0].name), 0);
  assert.equal((await findSendingDomain(pool, account.id, 'hello@cli-force.example.test'))?.id, d.id);

  const unknown = await runCli(['domains', 'verify', 'dom_00000000000000000000000000000000', '--force'], env);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /not found/);
});

test('cli: domains list shows the account\'s domains only', async () => {
  const other = await createAccount(pool, { name: 'Other' });
  await createDomain(pool, { accountId: other.id, name: 'not-listed.example.test', now: new Date() }, { secret: env.POSTLINE_SECRET, targets: { returnPathHost: 'x.test', trackingHost: 'x.test' } });
  const res = await runCli(['domains', 'list', '--account', account.id, '--json'], env);
  assert.equal(res.code, 0, res.stderr);
  const names = JSON.parse(res.stdout).map((d: { name: string }) => d.name);
  assert.ok(names.includes('cli-add.example.test') && names.includes('cli-force.example.test'));
  assert.ok(!names.includes('not-listed.example.test'), "another account's domain");
  const readable = await runCli(['domains', 'list', '--account', account.id], env);
  assert.match(readable.stdout, /cli-force\.example\.test\s+verified/);
});
