import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/clock.js';
import { createMailDns, type MxHost } from '../../src/mail/dns.js';
import { mxMatchesPattern, parseStsPolicy, parseStsRecord } from '../../src/mail/mta-sts/policy.js';
import { fetchStsPolicy, DEFAULT_POLICY_MAX_BYTES } from '../../src/mail/mta-sts/fetch.js';
import { MemoryStsPolicyStore, StsPolicyResolver, type StsLookup } from '../../src/mail/mta-sts/resolver.js';
import { planStsDelivery, stsDeferralReason } from '../../src/mail/mta-sts/verdict.js';
import { databaseStsPolicyStore } from '../../src/db/queries/mta-sts-policies.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { createTestCa, type TestCa } from '../helpers/test-ca.js';
import { testDatabase } from '../helpers/db.js';

const POLICY = 'version: STSv1\r\nmode: enforce\r\nmx: mx1.sts.test\r\nmx: *.backup.sts.test\r\nmax_age: 86400\r\n';

describe('parseStsPolicy', () => {
  test('a valid policy: mode, max_age and every mx pattern, CRLF or LF', () => {
    const crlf = parseStsPolicy(POLICY);
    assert.deepEqual(crlf, { ok: true, value: { mode: 'enforce', maxAgeSeconds: 86400, mx: ['mx1.sts.test', '*.backup.sts.test'] } });
    assert.deepEqual(parseStsPolicy(POLICY.replaceAll('\r\n', '\n')), crlf);
  });

  test('unknown fields are ignored, mx names are lower-cased', () => {
    const r = parseStsPolicy('version: STSv1\nmode: testing\nmx: MX.Example.COM\nmax_age: 0\nx-extension: whatever\n');
    assert.deepEqual(r, { ok: true, value: { mode: 'testing', maxAgeSeconds: 0, mx: ['mx.example.com'] } });
  });

  test('mode none may name no mx', () => {
    assert.deepEqual(parseStsPolicy('version: STSv1\nmode: none\nmax_age: 300\n'), { ok: true, value: { mode: 'none', maxAgeSeconds: 300, mx: [] } });
  });

  test('max_age: a year is the most, a second more is refused', () => {
    assert.equal(parseStsPolicy('version: STSv1\nmode: enforce\nmx: a.b.test\nmax_age: 31557600\n').ok, true);
    const past = parseStsPolicy('version: STSv1\nmode: enforce\nmx: a.b.test\nmax_age: 31557601\n');
    assert.equal(past.ok, false);
  });

  const bad: [string, string, RegExp][] = [
    ['wrong version', 'version: STSv2\nmode: enforce\nmx: a.b.test\nmax_age: 60\n', /version "STSv2"/],
    ['missing version', 'mode: enforce\nmx: a.b.test\nmax_age: 60\n', /version is missing/],
    ['unknown mode', 'version: STSv1\nmode: strict\nmx: a.b.test\nmax_age: 60\n', /mode "strict"/],
    ['mode in capitals', 'version: STSv1\nmode: ENFORCE\nmx: a.b.test\nmax_age: 60\n', /mode "ENFORCE"/],
    ['negative max_age', 'version: STSv1\nmode: enforce\nmx: a.b.test\nmax_age: -1\n', /max_age "-1"/],
    ['max_age with a unit', 'version: STSv1\nmode: enforce\nmx: a.b.test\nmax_age: 1d\n', /max_age "1d"/],
    ['missing max_age', 'version: STSv1\nmode: enforce\nmx: a.b.test\n', /max_age is missing/],
    ['enforce without mx', 'version: STSv1\nmode: enforce\nmax_age: 60\n', /mx is missing/],
    ['wildcard in the middle', 'version: STSv1\nmode: enforce\nmx: mail.*.test\nmax_age: 60\n', /mx "mail\.\*\.test"/],
    ['bare wildcard', 'version: STSv1\nmode: enforce\nmx: *\nmax_age: 60\n', /mx "\*"/],
    ['mode twice', 'version: STSv1\nmode: testing\nmode: enforce\nmx: a.b.test\nmax_age: 60\n', /mode is given more than once/],
    ['a line without a colon', 'version: STSv1\nmode enforce\nmx: a.b.test\nmax_age: 60\n', /not "key: value"/],
    ['an HTML page', '<html><body>Not found</body></html>', /not "key: value"/],
  ];
  for (const [name, text, error] of bad) {
    test(`refuses a policy with ${name}`, () => {
      const r = parseStsPolicy(text);
      assert.equal(r.ok, false);
      assert.match((r as { error: string }).error, error);
    });
  }
});

describe('parseStsRecord', () => {
  test('the id of the one v=STSv1 record; other TXT records are ignored', () => {
    assert.deepEqual(parseStsRecord(['v=STSv1; id=2026-01-01;']), { ok: false, error: 'id "2026-01-01" is not 1 to 32 letters and digits' });
    assert.deepEqual(parseStsRecord(['v=spf1 -all', 'v=STSv1; id=20260101000000Z;']), { ok: true, value: { id: '20260101000000Z' } });
    assert.deepEqual(parseStsRecord(['v=STSv1;id=abc']), { ok: true, value: { id: 'abc' } });
  });

  test('two v=STSv1 records, none, or one without an id mean no policy', () => {
    assert.equal(parseStsRecord(['v=STSv1; id=a;', 'v=STSv1; id=b;']).ok, false);
    assert.equal(parseStsRecord([]).ok, false);
    assert.equal(parseStsRecord(['v=STSv1;']).ok, false);
    assert.equal(parseStsRecord(['v=STSv10; id=a']).ok, false);
  });

  test('id: 32 characters is the most', () => {
    assert.equal(parseStsRecord([`v=STSv1; id=${'a'.repeat(32)}`]).ok, true);
    assert.equal(parseStsRecord([`v=STSv1; id=${'a'.repeat(33)}`]).ok, false);
  });
});

describe('mxMatchesPattern (RFC 8461 §4.1)', () => {
  test('an exact name matches itself only, whatever the case or a trailing dot', () => {
    assert.equal(mxMatchesPattern('MX1.sts.test.', 'mx1.sts.test'), true);
    assert.equal(mxMatchesPattern('mx2.sts.test', 'mx1.sts.test'), false);
  });
  test('*.example.com matches one more label on the left, not the bare name nor two labels', () => {
    assert.equal(mxMatchesPattern('mail.example.com', '*.example.com'), true);
    assert.equal(mxMatchesPattern('example.com', '*.example.com'), false);
    assert.equal(mxMatchesPattern('a.b.example.com', '*.example.com'), false);
    assert.equal(mxMatchesPattern('mail.badexample.com', '*.example.com'), false);
  });
});

describe('planStsDelivery', () => {
  const hosts: MxHost[] = [
    { exchange: 'mx1.sts.test', priority: 10, addresses: ['127.0.0.41'] },
    { exchange: 'rogue.other.test', priority: 20, addresses: ['127.0.0.42'] },
    { exchange: 'b1.backup.sts.test', priority: 30, addresses: ['127.0.0.43'] },
  ];
  const lookup = (mode: 'enforce' | 'testing' | 'none'): StsLookup => ({
    kind: 'policy',
    domain: 'sts.test',
    cached: { domain: 'sts.test', id: '1', policy: { mode, maxAgeSeconds: 60, mx: ['mx1.sts.test', '*.backup.sts.test'] }, text: '', fetchedAt: new Date(), expiresAt: new Date() },
  });

  test('enforce: only the listed hosts, in order, with verified TLS required', () => {
    const plan = planStsDelivery('sts.test', lookup('enforce'), hosts);
    assert.deepEqual(plan.hosts.map((h) => h.exchange), ['mx1.sts.test', 'b1.backup.sts.test']);
    assert.equal(plan.tls, 'required');
    assert.deepEqual(plan.unlisted, ['rogue.other.test']);
    assert.equal(plan.refusal, undefined);
  });

  test('enforce with no listed host: nothing to try, and a reason', () => {
    const plan = planStsDelivery('sts.test', lookup('enforce'), [hosts[1]]);
    assert.deepEqual(plan.hosts, []);
    assert.match(plan.refusal!, /^mta-sts: no MX host of sts\.test \(rogue\.other\.test\) matches/);
  });

  test('testing: every host, TLS checked and reported, unlisted hosts noted', () => {
    const plan = planStsDelivery('sts.test', lookup('testing'), hosts);
    assert.equal(plan.hosts.length, 3);
    assert.equal(plan.tls, 'checked');
    assert.deepEqual(plan.unlisted, ['rogue.other.test']);
  });

  test('none, no policy, or an unavailable one: opportunistic as without MTA-STS', () => {
    for (const l of [lookup('none'), null, { kind: 'none', domain: 'sts.test', reason: 'x' } as StsLookup, { kind: 'unavailable', domain: 'sts.test', failure: 'sts-policy-fetch-error', error: 'x' } as StsLookup]) {
      const plan = planStsDelivery('sts.test', l, hosts);
      assert.equal(plan.tls, 'opportunistic');
      assert.equal(plan.hosts.length, 3);
    }
  });

  test('the deferral reason says which host offers no STARTTLS', () => {
    assert.equal(
      stsDeferralReason('sts.test', 'mx1.sts.test', { result: 'starttls-not-supported', detail: '500 command not recognized' }),
      'mta-sts: mx1.sts.test offers no STARTTLS (sts.test enforces TLS; 500 command not recognized)',
    );
  });
});

// ---------------------------------------------------------------------------------------
// Fetching over HTTPS from a loopback policy server, names resolved by the loopback zone.

const POLICY_HOST_IP = '127.0.0.31';
let ca: TestCa;
let dnsServer: TestDnsServer;
let server: Server;
let port: number;
let handler: (req: IncomingMessage, res: ServerResponse) => void;
let requests: string[];

before(async () => {
  ca = createTestCa();
  dnsServer = await startDnsServer();
  const { key, cert } = ca.issue(['mta-sts.sts.test', 'mta-sts.other.test']);
  server = createServer({ key, cert }, (req, res) => {
    requests.push(`${req.headers.host}${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, POLICY_HOST_IP, () => r()));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await dnsServer.close();
  ca.close();
});
beforeEach(() => {
  dnsServer.clear();
  dnsServer.setRecords('mta-sts.sts.test', 'A', [POLICY_HOST_IP]);
  dnsServer.setRecords('mta-sts.other.test', 'A', [POLICY_HOST_IP]);
  dnsServer.setRecords('_mta-sts.sts.test', 'TXT', ['v=STSv1; id=one;']);
  requests = [];
  handler = servePolicy(POLICY);
});

function servePolicy(body: string, headers: Record<string, string> = { 'content-type': 'text/plain' }, status = 200) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, headers);
    res.end(body);
  };
}

const dns = () => createMailDns({ servers: [dnsServer.address] });
const fetchOpts = (extra: Partial<Parameters<typeof fetchStsPolicy>[1]> = {}) => ({ dns: dns(), port, extraCa: [ca.cert], timeoutMs: 5000, ...extra });

describe('fetchStsPolicy', () => {
  test('fetches /.well-known/mta-sts.txt from mta-sts.<domain>, resolved through the mail resolver', async () => {
    const r = await fetchStsPolicy('sts.test', fetchOpts());
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.policy.mode, 'enforce');
    assert.equal(r.text, POLICY);
    assert.deepEqual(requests, [`mta-sts.sts.test:${port}/.well-known/mta-sts.txt`]);
    assert.ok(dnsServer.queryCount('mta-sts.sts.test', 'A') >= 1);
  });

  test('Content-Type text/plain with a charset parameter is accepted', async () => {
    handler = servePolicy(POLICY, { 'content-type': 'text/plain; charset=utf-8' });
    assert.equal((await fetchStsPolicy('sts.test', fetchOpts())).ok, true);
  });

  test('a certificate from a CA nobody trusts: sts-webpki-invalid', async () => {
    const r = await fetchStsPolicy('sts.test', fetchOpts({ extraCa: undefined }));
    assert.deepEqual([r.ok, !r.ok && r.failure], [false, 'sts-webpki-invalid']);
  });

  test('a certificate for another name: sts-webpki-invalid (host mismatch)', async () => {
    dnsServer.setRecords('mta-sts.wrong.test', 'A', [POLICY_HOST_IP]);
    const r = await fetchStsPolicy('wrong.test', fetchOpts());
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.failure, 'sts-webpki-invalid');
    assert.match(!r.ok ? r.error : '', /certificate-host-mismatch/);
  });

  test('an expired certificate: sts-webpki-invalid', async () => {
    const expired = ca.issue(['mta-sts.old.test'], { notBefore: new Date(Date.now() - 10 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) });
    const s = createServer(expired, servePolicy(POLICY));
    await new Promise<void>((r) => s.listen(0, '127.0.0.32', () => r()));
    try {
      dnsServer.setRecords('mta-sts.old.test', 'A', ['127.0.0.32']);
      const r = await fetchStsPolicy('old.test', fetchOpts({ port: (s.address() as AddressInfo).port }));
      assert.equal(!r.ok && r.failure, 'sts-webpki-invalid');
      assert.match(!r.ok ? r.error : '', /certificate-expired/);
    } finally {
      await new Promise<void>((r) => s.close(() => r()));
    }
  });

  test('a redirect is not followed: sts-policy-fetch-error', async () => {
    handler = servePolicy('', { location: 'https://mta-sts.other.test/.well-known/mta-sts.txt' }, 301);
    const r = await fetchStsPolicy('sts.test', fetchOpts());
    assert.equal(!r.ok && r.failure, 'sts-policy-fetch-error');
    assert.equal(requests.length, 1);
  });

  test('404: sts-policy-fetch-error', async () => {
    handler = servePolicy('not here', { 'content-type': 'text/plain' }, 404);
    const r = await fetchStsPolicy('sts.test', fetchOpts());
    assert.match(!r.ok ? `${r.failure} ${r.error}` : '', /^sts-policy-fetch-error .*HTTP 404/);
  });

  test('no address for mta-sts.<domain>: sts-policy-fetch-error', async () => {
    const r = await fetchStsPolicy('nowhere.test', fetchOpts());
    assert.equal(!r.ok && r.failure, 'sts-policy-fetch-error');
  });

  test('a body that is not text/plain: sts-policy-invalid', async () => {
    handler = servePolicy(POLICY, { 'content-type': 'text/html' });
    const r = await fetchStsPolicy('sts.test', fetchOpts());
    assert.equal(!r.ok && r.failure, 'sts-policy-invalid');
  });

  test('a policy that does not parse: sts-policy-invalid', async () => {
    handler = servePolicy('version: STSv1\nmode: sometimes\nmx: a.b.test\nmax_age: 60\n');
    const r = await fetchStsPolicy('sts.test', fetchOpts());
    assert.equal(!r.ok && r.failure, 'sts-policy-invalid');
  });

  // Padded with an extension field to an exact size.
  const policyOfSize = (size: number) => {
    const head = 'version: STSv1\nmode: testing\nmx: a.b.test\nmax_age: 60\nx-pad: ';
    return head + 'x'.repeat(size - head.length - 1) + '\n';
  };

  test('64 KB: a policy of exactly the limit is read, one byte more is refused', async () => {
    handler = servePolicy(policyOfSize(DEFAULT_POLICY_MAX_BYTES));
    assert.equal((await fetchStsPolicy('sts.test', fetchOpts())).ok, true);
    handler = servePolicy(policyOfSize(DEFAULT_POLICY_MAX_BYTES + 1));
    const r = await fetchStsPolicy('sts.test', fetchOpts());
    assert.match(!r.ok ? `${r.failure} ${r.error}` : '', /^sts-policy-invalid .*larger than 65536 bytes/);
  });

  test('the size limit holds without a Content-Length (chunked body)', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 70; i++) res.write('x-pad: ' + 'y'.repeat(1017) + '\n');
      res.end();
    };
    const r = await fetchStsPolicy('sts.test', fetchOpts());
    assert.match(!r.ok ? `${r.failure} ${r.error}` : '', /^sts-policy-invalid .*larger than/);
  });

  test('a server that never answers: sts-policy-fetch-error after the time limit', async () => {
    handler = () => {}; // holds the request open
    const started = Date.now();
    const r = await fetchStsPolicy('sts.test', fetchOpts({ timeoutMs: 300 }));
    assert.match(!r.ok ? `${r.failure} ${r.error}` : '', /^sts-policy-fetch-error .*within 300 ms/);
    assert.ok(Date.now() - started < 3000);
  });
});

describe('StsPolicyResolver', () => {
  const resolverWith = (clock: ManualClock, store = new MemoryStsPolicyStore(), recheckSeconds = 0) =>
    new StsPolicyResolver({ dns: dns(), store, clock, recheckSeconds, fetch: { port, extraCa: [ca.cert], timeoutMs: 5000 } });

  test('no _mta-sts record: no policy and no fetch', async () => {
    dnsServer.deleteRecords('_mta-sts.sts.test');
    const r = await resolverWith(new ManualClock()).policyFor('sts.test');
    assert.equal(r.kind, 'none');
    assert.equal(requests.length, 0);
  });

  test('one fetch per max_age: cached until it expires on the injected clock, then fetched again', async () => {
    const clock = new ManualClock();
    const resolver = resolverWith(clock);
    const first = await resolver.policyFor('sts.test');
    assert.equal(first.kind, 'policy');
    assert.equal(requests.length, 1);
    for (let i = 0; i < 5; i++) {
      clock.advance(3600_000);
      assert.equal((await resolver.policyFor('sts.test')).kind, 'policy');
    }
    assert.equal(requests.length, 1, 'five hours of a 24-hour max_age: still the first fetch');
    clock.advance(19 * 3600_000);
    assert.equal((await resolver.policyFor('sts.test')).kind, 'policy');
    assert.equal(requests.length, 2, 'past max_age: fetched again');
  });

  test('a new TXT id makes it fetch again at once', async () => {
    const clock = new ManualClock();
    const resolver = resolverWith(clock);
    await resolver.policyFor('sts.test');
    handler = servePolicy(POLICY.replace('mode: enforce', 'mode: testing'));
    dnsServer.setRecords('_mta-sts.sts.test', 'TXT', ['v=STSv1; id=two;']);
    clock.advance(1000);
    const r = await resolver.policyFor('sts.test');
    assert.equal(requests.length, 2);
    assert.ok(r.kind === 'policy');
    assert.equal(r.cached.id, 'two');
    assert.equal(r.cached.policy.mode, 'testing');
  });

  test('the TXT answer is trusted for recheckSeconds in one process', async () => {
    const clock = new ManualClock();
    const resolver = resolverWith(clock, new MemoryStsPolicyStore(), 300);
    await resolver.policyFor('sts.test');
    await resolver.policyFor('sts.test');
    assert.equal(dnsServer.queryCount('_mta-sts.sts.test', 'TXT'), 1);
    clock.advance(301_000);
    await resolver.policyFor('sts.test');
    assert.equal(dnsServer.queryCount('_mta-sts.sts.test', 'TXT'), 2);
  });

  test('concurrent lookups share one fetch', async () => {
    const resolver = resolverWith(new ManualClock());
    const all = await Promise.all(Array.from({ length: 10 }, () => resolver.policyFor('sts.test')));
    assert.ok(all.every((r) => r.kind === 'policy'));
    assert.equal(requests.length, 1);
  });

  test('a cached policy stays in force when its TXT record disappears or the refresh fails', async () => {
    const clock = new ManualClock();
    const resolver = resolverWith(clock);
    await resolver.policyFor('sts.test');
    dnsServer.deleteRecords('_mta-sts.sts.test');
    clock.advance(1000);
    assert.equal((await resolver.policyFor('sts.test')).kind, 'policy');

    dnsServer.setRecords('_mta-sts.sts.test', 'TXT', ['v=STSv1; id=three;']);
    handler = servePolicy('broken', { 'content-type': 'text/plain' }, 500);
    clock.advance(1000);
    const r = await resolver.policyFor('sts.test');
    assert.ok(r.kind === 'policy');
    assert.equal(r.cached.id, 'one');
    assert.equal(r.refreshError?.failure, 'sts-policy-fetch-error');
  });

  test('a published policy that cannot be fetched and was never cached: unavailable, with the failure', async () => {
    handler = servePolicy('version: STSv1\nmode: enforce\n', { 'content-type': 'text/plain' });
    const r = await resolverWith(new ManualClock()).policyFor('sts.test');
    assert.deepEqual([r.kind, r.kind === 'unavailable' && r.failure], ['unavailable', 'sts-policy-invalid']);
  });

  test('the database store is shared: a second worker uses the first one\'s fetch', async () => {
    const { pool } = await testDatabase();
    const clock = new ManualClock();
    const workerA = new StsPolicyResolver({ dns: dns(), store: databaseStsPolicyStore(pool), clock, recheckSeconds: 0, fetch: { port, extraCa: [ca.cert] } });
    const workerB = new StsPolicyResolver({ dns: dns(), store: databaseStsPolicyStore(pool), clock, recheckSeconds: 0, fetch: { port, extraCa: [ca.cert] } });
    const fromA = await workerA.policyFor('sts.test');
    const fromB = await workerB.policyFor('sts.test');
    assert.equal(requests.length, 1);
    assert.ok(fromA.kind === 'policy' && fromB.kind === 'policy');
    assert.deepEqual(fromB.cached.policy, fromA.cached.policy);
    assert.equal(fromB.cached.text, POLICY);
    assert.equal(fromB.cached.expiresAt.getTime(), clock.now().getTime() + 86_400_000);
  });
});
