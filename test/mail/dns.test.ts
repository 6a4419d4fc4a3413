import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { createMailDns, DnsTempError } from '../../src/mail/dns.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';

let dnsServer: TestDnsServer;
before(async () => {
  dnsServer = await startDnsServer();
});
after(() => dnsServer.close());
beforeEach(() => dnsServer.clear());

const freshDns = (clock = new ManualClock()) => createMailDns({ servers: [dnsServer.address], clock });

test('resolveMx: hosts come back lowest preference first, with their addresses', async () => {
  dnsServer.setRecords('example.test', 'MX', [
    { exchange: 'mx3.example.test', priority: 30 },
    { exchange: 'mx1.example.test', priority: 10 },
    { exchange: 'mx2.example.test', priority: 20 },
  ]);
  dnsServer.setRecords('mx1.example.test', 'A', ['127.0.0.11']);
  dnsServer.setRecords('mx2.example.test', 'A', ['127.0.0.12']);
  dnsServer.setRecords('mx2.example.test', 'AAAA', ['::1']);
  dnsServer.setRecords('mx3.example.test', 'AAAA', ['::1']);
  const result = await freshDns().resolveMx('Example.TEST.');
  assert.ok(result.ok);
  assert.equal(result.implicit, false);
  assert.deepEqual(result.hosts, [
    { exchange: 'mx1.example.test', priority: 10, addresses: ['127.0.0.11'] },
    { exchange: 'mx2.example.test', priority: 20, addresses: ['127.0.0.12', '::1'] },
    { exchange: 'mx3.example.test', priority: 30, addresses: ['::1'] },
  ]);
});

test('resolveMx: answers are cached until their TTL runs out on the injected clock', async () => {
  const clock = new ManualClock();
  const dns = freshDns(clock);
  dnsServer.setRecords('cache.test', 'MX', [{ exchange: 'mx-a.cache.test', priority: 10 }]);
  dnsServer.setRecords('mx-a.cache.test', 'A', ['127.0.0.21'], 120);
  dnsServer.setRecords('mx-b.cache.test', 'A', ['127.0.0.22'], 120);

  const first = await dns.resolveMx('cache.test');
  assert.ok(first.ok);
  assert.equal(first.ttlSeconds, 120);
  assert.equal(dnsServer.queryCount('cache.test', 'MX'), 1);

  dnsServer.setRecords('cache.test', 'MX', [{ exchange: 'mx-b.cache.test', priority: 10 }]);
  clock.advance(119_000);
  const cached = await dns.resolveMx('cache.test');
  assert.ok(cached.ok);
  assert.equal(cached.hosts[0].exchange, 'mx-a.cache.test');
  assert.equal(dnsServer.queryCount('cache.test', 'MX'), 1, 'served from cache, no query');

  clock.advance(2_000);
  const refreshed = await dns.resolveMx('cache.test');
  assert.ok(refreshed.ok);
  assert.equal(refreshed.hosts[0].exchange, 'mx-b.cache.test');
  assert.equal(dnsServer.queryCount('cache.test', 'MX'), 2);
});

test('resolveMx: concurrent calls for a domain not cached yet share one lookup', async () => {
  const dns = freshDns();
  dnsServer.setRecords('burst.test', 'MX', [{ exchange: 'mx.burst.test', priority: 10 }]);
  dnsServer.setRecords('mx.burst.test', 'A', ['127.0.0.31']);
  // A claim's batch of messages to one new domain.
  const results = await Promise.all(Array.from({ length: 50 }, () => dns.resolveMx('burst.test')));
  assert.ok(results.every((r) => r.ok && r.hosts[0].addresses[0] === '127.0.0.31'));
  assert.equal(dnsServer.queryCount('burst.test', 'MX'), 1);
  assert.equal(dnsServer.queryCount('mx.burst.test', 'A'), 1);
  // Once answered, the next call is the cache's.
  await dns.resolveMx('burst.test');
  assert.equal(dnsServer.queryCount('burst.test', 'MX'), 1);
});

test('resolveMx: without MX records the domain itself is the mail host (implicit MX)', async () => {
  dnsServer.setRecords('implicit.test', 'A', ['127.0.0.31']);
  dnsServer.setRecords('implicit.test', 'TXT', ['v=spf1 -all']);
  const result = await freshDns().resolveMx('implicit.test');
  assert.ok(result.ok);
  assert.equal(result.implicit, true);
  assert.deepEqual(result.hosts, [{ exchange: 'implicit.test', priority: 0, addresses: ['127.0.0.31'] }]);
});

test('resolveMx: an unknown domain is nxdomain, not a throw', async () => {
  const result = await freshDns().resolveMx('does-not-exist.test');
  assert.deepEqual(result.ok ? null : result.kind, 'nxdomain');
});

test('resolveMx: a domain with neither MX nor address is no_mx', async () => {
  dnsServer.setRecords('textonly.test', 'TXT', ['hello']);
  const result = await freshDns().resolveMx('textonly.test');
  assert.equal(result.ok ? null : result.kind, 'no_mx');
});

test('resolveMx: a null MX (RFC 7505) is a permanent null_mx failure', async () => {
  dnsServer.setRecords('nomail.test', 'MX', [{ exchange: '.', priority: 0 }]);
  dnsServer.setRecords('nomail.test', 'A', ['127.0.0.41']);
  const result = await freshDns().resolveMx('nomail.test');
  assert.equal(result.ok ? null : result.kind, 'null_mx');
});

test('resolveMx: a failing DNS server is a temp failure and is not cached', async () => {
  const dns = freshDns();
  dnsServer.fail('flaky.test', 'SERVFAIL');
  const result = await dns.resolveMx('flaky.test');
  assert.equal(result.ok ? null : result.kind, 'temp');
  dnsServer.clear();
  dnsServer.setRecords('flaky.test', 'MX', [{ exchange: 'mx.flaky.test', priority: 5 }]);
  dnsServer.setRecords('mx.flaky.test', 'A', ['127.0.0.51']);
  assert.equal((await dns.resolveMx('flaky.test')).ok, true);
});

test('resolveTxt: long records are reassembled from their 255-byte chunks; absent is null', async () => {
  const long = 'v=DKIM1; k=rsa; p=' + 'A'.repeat(400);
  dnsServer.setRecords('s1._domainkey.example.test', 'TXT', [long]);
  const dns = freshDns();
  assert.deepEqual(await dns.resolveTxt('s1._domainkey.example.test'), [long]);
  assert.equal(await dns.resolveTxt('nothing.example.test'), null);
});

test('resolveCname: returns the target; absent is null; a server failure throws DnsTempError', async () => {
  dnsServer.setRecords('track.example.test', 'CNAME', ['Track.Postline.TEST.']);
  const dns = freshDns();
  assert.deepEqual(await dns.resolveCname('track.example.test'), ['track.postline.test']);
  assert.equal(await dns.resolveCname('www.example.test'), null);
  dnsServer.fail('broken.example.test', 'SERVFAIL');
  await assert.rejects(dns.resolveCname('broken.example.test'), DnsTempError);
});

test('resolveHostAddresses: IPv4 then IPv6, with the smallest TTL', async () => {
  dnsServer.setRecords('host.example.test', 'A', ['127.0.0.61'], 90);
  dnsServer.setRecords('host.example.test', 'AAAA', ['::1'], 30);
  const a = await freshDns().resolveHostAddresses('host.example.test');
  assert.deepEqual(a.addresses, ['127.0.0.61', '::1']);
  assert.equal(a.ttlSeconds, 30);
});
