import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createMailDns } from '../../src/mail/dns.js';
import { checkSourceDns } from '../../src/mail/fcrdns.js';
import { checkSourcesAtStart } from '../../src/delivery/sources/check-at-start.js';
import { setAccountPool } from '../../src/domain/accounts.js';
import { reserveWarmupSend } from '../../src/db/queries/warmup.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { reverseName, startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';

const dir = mkdtempSync(join(tmpdir(), 'postline-pools-'));
const policyPath = join(dir, 'policy.json');
const POLICY = {
  sources: {
    tx1: { address: '127.0.0.71', ehlo: 'tx1.mta.test' },
    bulk1: { address: '127.0.0.72', ehlo: 'bulk1.mta.test' },
    own1: { address: '127.0.0.73', ehlo: 'own1.mta.test' },
  },
  pools: { transactional: ['tx1'], broadcast: ['bulk1'], acme: ['own1'] },
};
writeFileSync(policyPath, JSON.stringify(POLICY));

const { app, pool, config, dbUrl } = await bootApp({ env: { POSTLINE_DELIVERY_POLICY: policyPath } });
const acme = await createTestAccount(pool, 'Acme');
const other = await createTestAccount(pool, 'Other');
const cliEnv = { DATABASE_URL: dbUrl, POSTLINE_DATA_DIR: dir, LOG_LEVEL: 'silent', POSTLINE_DELIVERY_POLICY: policyPath };

let dnsServer: TestDnsServer;
before(async () => {
  dnsServer = await startDnsServer();
});
after(() => dnsServer.close());

const me = async (account = acme) => (await app.inject({ url: '/api/v1/me', headers: account.live })).json();

describe('pools per account', () => {
  test("GET /api/v1/me: the streams' own pools by default", async () => {
    assert.deepEqual((await me()).pools, { transactional: 'transactional', broadcast: 'broadcast' });
    assert.deepEqual((await app.inject({ url: '/api/v1/me', headers: acme.test })).json().pools, { transactional: 'transactional', broadcast: 'broadcast' });
  });

  test('postline accounts set-pool: both streams without --stream, one with it, --pool default undoes it', async () => {
    const both = await runCli(['accounts', 'set-pool', acme.accountId, '--pool', 'acme', '--json'], cliEnv);
    assert.equal(both.code, 0, both.stderr);
    assert.deepEqual(JSON.parse(both.stdout).pools, { transactional: 'acme', broadcast: 'acme' });
    assert.deepEqual((await me()).pools, { transactional: 'acme', broadcast: 'acme' });

    const one = await runCli(['accounts', 'set-pool', acme.accountId, '--pool', 'default', '--stream', 'transactional'], cliEnv);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /transactional mail through default, broadcast mail through acme/);
    assert.deepEqual((await me()).pools, { transactional: 'transactional', broadcast: 'acme' });
    assert.deepEqual((await me(other)).pools, { transactional: 'transactional', broadcast: 'broadcast' }, 'other accounts keep theirs');

    const undo = await runCli(['accounts', 'set-pool', acme.accountId, '--pool', 'default'], cliEnv);
    assert.equal(undo.code, 0, undo.stderr);
    assert.deepEqual((await me()).pools, { transactional: 'transactional', broadcast: 'broadcast' });
  });

  test('set-pool refuses a pool the policy does not define, an unknown stream and an unknown account', async () => {
    const pool404 = await runCli(['accounts', 'set-pool', acme.accountId, '--pool', 'nope'], cliEnv);
    assert.equal(pool404.code, 1);
    assert.match(pool404.stderr, /^error: pool: "nope" is not a pool of the delivery policy \(pools: transactional, broadcast, acme, or default\)/);
    const stream = await runCli(['accounts', 'set-pool', acme.accountId, '--pool', 'acme', '--stream', 'bulk'], cliEnv);
    assert.equal(stream.code, 1);
    assert.match(stream.stderr, /--stream/);
    const account = await runCli(['accounts', 'set-pool', 'acc_missing', '--pool', 'acme'], cliEnv);
    assert.equal(account.code, 1);
    assert.match(account.stderr, /^error: account acc_missing not found/);
  });

  test('without sources in the policy no pool can be assigned', async () => {
    const noPolicy = { ...cliEnv, POSTLINE_DELIVERY_POLICY: '' };
    const res = await runCli(['accounts', 'set-pool', acme.accountId, '--pool', 'acme'], noPolicy);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /defines no sources and pools/);
  });

  test('a pool removed from the policy: the account falls back to the stream pool', async () => {
    await pool.query('UPDATE accounts SET pool_broadcast = $2 WHERE id = $1', [acme.accountId, 'retired']);
    assert.equal((await me()).pools.broadcast, 'broadcast');
    await setAccountPool(pool, Object.keys(config.deliveryPolicy.identity.pools), acme.accountId, 'default');
  });
});

describe('the source a message left from', () => {
  test('GET /api/v1/emails/{id}: source is null until the message has left from one, then {name, address}', async () => {
    await createVerifiedDomain(pool, acme.accountId, 'src.test', config.secret);
    const sent = await app.inject({ method: 'POST', url: '/api/v1/emails', headers: acme.live, payload: { to: 'ada@example.org', from: { email: 'hello@src.test' }, subject: 's', text: 't' } });
    assert.equal(sent.statusCode, 202, sent.body);
    const { id } = sent.json();
    const queued = await app.inject({ url: `/api/v1/emails/${id}`, headers: acme.live });
    assert.equal(queued.statusCode, 200, queued.body);
    assert.equal(queued.json().source, null);
    await pool.query("UPDATE messages SET source_name = 'bulk1', source_address = '127.0.0.72' WHERE id = $1", [id]);
    const left = await app.inject({ url: `/api/v1/emails/${id}`, headers: acme.live });
    assert.deepEqual(left.json().source, { name: 'bulk1', address: '127.0.0.72' });
    assert.equal((await app.inject({ url: `/api/v1/emails/${id}`, headers: other.live })).statusCode, 404);
  });
});

describe('forward-confirmed reverse DNS of the sources', () => {
  const dns = () => createMailDns({ servers: [dnsServer.address] });
  const tx1 = config.deliveryPolicy.identity.sources[0];

  test('EHLO name resolving to the address and PTR naming it back: ok', async () => {
    dnsServer.setRecords('tx1.mta.test', 'A', ['127.0.0.71']);
    dnsServer.setRecords(reverseName('127.0.0.71'), 'PTR', ['TX1.mta.test.']);
    const check = await checkSourceDns(dns(), tx1, new Date('2026-11-20T10:00:00Z'));
    assert.deepEqual({ ...check, checkedAt: undefined }, {
      name: 'tx1', address: '127.0.0.71', ehlo: 'tx1.mta.test', forward: ['127.0.0.71'], reverse: ['tx1.mta.test'], ok: true, warning: null, checkedAt: undefined,
    });
  });

  test('a PTR naming another host, or none: a warning saying what to fix', async () => {
    dnsServer.setRecords('tx1.mta.test', 'A', ['127.0.0.71']);
    dnsServer.setRecords(reverseName('127.0.0.71'), 'PTR', ['something.else.test']);
    const wrong = await checkSourceDns(dns(), tx1, new Date());
    assert.equal(wrong.ok, false);
    assert.match(wrong.warning!, /the PTR record of 127\.0\.0\.71 names something\.else\.test, not tx1\.mta\.test/);
    dnsServer.deleteRecords(reverseName('127.0.0.71'));
    const none = await checkSourceDns(dns(), tx1, new Date());
    assert.match(none.warning!, /127\.0\.0\.71 has no PTR record \(it must name tx1\.mta\.test\)/);
  });

  test('an EHLO name resolving elsewhere or nowhere: a warning', async () => {
    dnsServer.setRecords(reverseName('127.0.0.71'), 'PTR', ['tx1.mta.test']);
    dnsServer.setRecords('tx1.mta.test', 'A', ['127.0.0.99']);
    assert.match((await checkSourceDns(dns(), tx1, new Date())).warning!, /tx1\.mta\.test resolves to 127\.0\.0\.99, not 127\.0\.0\.71/);
    dnsServer.deleteRecords('tx1.mta.test');
    assert.match((await checkSourceDns(dns(), tx1, new Date())).warning!, /tx1\.mta\.test has no A\/AAAA record/);
  });

  test('at start-up: warnings go to the log, results to GET /api/v1/deliverability/sources (the account\'s pools only)', async () => {
    dnsServer.clear();
    dnsServer.setRecords('tx1.mta.test', 'A', ['127.0.0.71']);
    dnsServer.setRecords(reverseName('127.0.0.71'), 'PTR', ['tx1.mta.test']);
    dnsServer.setRecords('bulk1.mta.test', 'A', ['127.0.0.72']);
    dnsServer.setRecords('own1.mta.test', 'A', ['127.0.0.73']);
    dnsServer.setRecords(reverseName('127.0.0.73'), 'PTR', ['own1.mta.test']);
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
    const checks = await checkSourcesAtStart({ pool, dns: dns(), identity: config.deliveryPolicy.identity, now: new Date('2026-11-20T10:00:00Z'), log });
    assert.deepEqual(checks.map((c) => [c.name, c.ok]), [['tx1', true], ['bulk1', false], ['own1', true]]);
    assert.equal(lines.length, 1);
    assert.match(JSON.parse(lines[0]).msg, /^source bulk1: forward-confirmed reverse DNS fails: 127\.0\.0\.72 has no PTR record/);

    const res = await app.inject({ url: '/api/v1/deliverability/sources', headers: acme.live });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(body.pools, { transactional: 'transactional', broadcast: 'broadcast' });
    assert.deepEqual(body.data.map((s: { name: string; pools: string[]; dns: { ok: boolean } }) => [s.name, s.pools, s.dns.ok]), [['tx1', ['transactional'], true], ['bulk1', ['broadcast'], false]]);
    assert.match(body.data[1].dns.warning, /no PTR record/);

    // An account with its own pool sees that pool's source, and not the pools it does not use.
    await setAccountPool(pool, Object.keys(config.deliveryPolicy.identity.pools), other.accountId, 'acme', 'broadcast');
    const mine = (await app.inject({ url: '/api/v1/deliverability/sources', headers: other.live })).json();
    assert.deepEqual(mine.data.map((s: { name: string }) => s.name), ['tx1', 'own1']);
  });
});

test('postline delivery status: every source with its pools, DNS check and warm-up per provider, next to the destinations', async () => {
  // The same sources, own1 warming up since yesterday (the CLI reads the real clock), three
  // sends reserved today at gmail and one at a rolled-up MX set.
  const today = new Date().toISOString().slice(0, 10);
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const warmingPath = join(dir, 'warming.json');
  writeFileSync(warmingPath, JSON.stringify({ ...POLICY, sources: { ...POLICY.sources, own1: { ...POLICY.sources.own1, warmup: { start: yesterday, daily: [2, 5, 9] } } } }));
  for (const provider of ['gmail', 'gmail', 'gmail', 'mx:mx.own.test']) {
    assert.ok(await reserveWarmupSend(pool, { source: 'own1', provider, day: today, cap: 5 }));
  }
  const env = { ...cliEnv, POSTLINE_DELIVERY_POLICY: warmingPath };
  const res = await runCli(['delivery', 'status', '--json'], env);
  assert.equal(res.code, 0, res.stderr);
  const status = JSON.parse(res.stdout);
  assert.deepEqual(Object.keys(status), ['generatedAt', 'data', 'sources']);
  assert.deepEqual(status.data, [], 'no delivery yet');
  const { sources } = status;
  assert.deepEqual(sources.map((s: { name: string; address: string; ehlo: string; pools: string[] }) => [s.name, s.address, s.ehlo, s.pools]), [
    ['tx1', '127.0.0.71', 'tx1.mta.test', ['transactional']],
    ['bulk1', '127.0.0.72', 'bulk1.mta.test', ['broadcast']],
    ['own1', '127.0.0.73', 'own1.mta.test', ['acme']],
  ]);
  assert.equal(sources[0].warmup, null, 'no plan');
  assert.deepEqual(sources[2].warmup, {
    start: yesterday, day: 2, cap: 5, sentToday: 4,
    providers: [{ name: 'gmail', sentToday: 3 }, { name: 'mx:mx.own.test', sentToday: 1 }],
  });
  // The forward-confirmed reverse DNS check of the start-up above.
  assert.deepEqual([sources[0].dns.ok, sources[1].dns.ok, sources[2].dns.ok], [true, false, true]);
  assert.match(sources[1].dns.warning, /127\.0\.0\.72 has no PTR record/);

  const readable = await runCli(['delivery', 'status'], env);
  assert.equal(readable.code, 0, readable.stderr);
  assert.match(readable.stdout, /^No delivery in the last hour\./);
  assert.match(readable.stdout, /own1 +127\.0\.0\.73 +own1\.mta\.test +acme +ok +day 2, cap 5 per provider, sent 4 \(gmail 3, mx:mx\.own\.test 1\)/);
  assert.match(readable.stdout, /bulk1 .* WARNING/);
  assert.match(readable.stdout, /source bulk1: forward-confirmed reverse DNS fails/);
  // One way to read it: the separate command is gone.
  assert.notEqual((await runCli(['delivery', 'sources'], env)).code, 0);
});
