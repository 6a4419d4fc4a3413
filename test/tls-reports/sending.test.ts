import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { createMailDns } from '../../src/mail/dns.js';
import { parseTlsRptRecord } from '../../src/mail/tls-rpt/record.js';
import { recordTlsSessions } from '../../src/domain/tls-reports.js';
import { sendDueTlsReports } from '../../src/delivery/tls-reports/send.js';
import { createReportMailer } from '../../src/delivery/report-mailer.js';
import { testConfig } from '../helpers/app.js';
import { testDatabase } from '../helpers/db.js';
import { runCli } from '../helpers/cli.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { createTestCa, type TestCa } from '../helpers/test-ca.js';

const POLICY = 'version: STSv1\nmode: enforce\nmx: mx1.rpt.test\nmax_age: 86400\n';

describe('parseTlsRptRecord', () => {
  test('the mailto and https addresses of the one v=TLSRPTv1 record', () => {
    assert.deepEqual(parseTlsRptRecord(['v=spf1 -all', 'v=TLSRPTv1; rua=mailto:tls@rpt.test,https://reports.rpt.test/v1']), {
      ok: true, value: { rua: ['mailto:tls@rpt.test', 'https://reports.rpt.test/v1'] },
    });
  });
  test('http, other schemes, two records, no rua: no reports wanted', () => {
    assert.equal(parseTlsRptRecord(['v=TLSRPTv1; rua=http://reports.rpt.test/']).ok, false);
    assert.equal(parseTlsRptRecord(['v=TLSRPTv1; rua=ftp://x.test/']).ok, false);
    assert.equal(parseTlsRptRecord(['v=TLSRPTv1; rua=mailto:a@b.test', 'v=TLSRPTv1; rua=mailto:c@d.test']).ok, false);
    assert.equal(parseTlsRptRecord(['v=TLSRPTv1;']).ok, false);
    assert.equal(parseTlsRptRecord([]).ok, false);
  });
});

const { pool, url } = await testDatabase();
let dnsServer: TestDnsServer;
let ca: TestCa;
let receiver: Server;
let received: { contentType: string | undefined; path: string | undefined; body: Buffer }[] = [];

before(async () => {
  dnsServer = await startDnsServer();
  ca = createTestCa();
  receiver = createServer(ca.issue(['reports.rpt.test']), (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ contentType: req.headers['content-type'], path: req.url, body: Buffer.concat(chunks) });
      res.writeHead(201).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.120', () => r()));
});
after(async () => {
  await new Promise<void>((r) => receiver.close(() => r()));
  await dnsServer.close();
  ca.close();
});

const at = new Date('2026-11-20T12:00:00Z');

test("postline tls-report --send POSTs the gzipped report to the domain's https rua; mailto needs POSTLINE_TLSRPT_FROM", async () => {
  const port = (receiver.address() as AddressInfo).port;
  await recordTlsSessions(pool, [
    { domain: 'rpt.test', at, policy: { type: 'sts', text: POLICY }, result: 'success' },
    { domain: 'rpt.test', at, policy: { type: 'sts', text: POLICY }, result: 'starttls-not-supported', receivingMx: 'mx1.rpt.test' },
  ]);
  dnsServer.setRecords('_smtp._tls.rpt.test', 'TXT', [`v=TLSRPTv1; rua=mailto:tls@rpt.test,https://reports.rpt.test:${port}/tlsrpt`]);
  dnsServer.setRecords('reports.rpt.test', 'A', ['127.0.0.120']);
  const env = {
    DATABASE_URL: url, POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-tlsrpt-')), LOG_LEVEL: 'silent',
    POSTLINE_BASE_URL: 'https://mta.postline.test', POSTLINE_DNS_SERVERS: dnsServer.address, POSTLINE_WEBHOOK_ALLOW_PRIVATE: 'true',
    // The product trusts the test CA the way an operator would make it trust a private one.
    NODE_EXTRA_CA_CERTS: ca.certPath,
  };
  const res = await runCli(['tls-report', 'rpt.test', '--day', '2026-11-20', '--send', '--json'], env);
  assert.equal(res.code, 0, res.stderr);
  const delivery = JSON.parse(res.stdout);
  assert.deepEqual(delivery.results.map((r: { uri: string; delivered: boolean }) => [r.uri.split(':')[0], r.delivered]), [['mailto', false], ['https', true]]);
  assert.match(delivery.results[0].detail, /POSTLINE_TLSRPT_FROM/);
  assert.equal(received.length, 1);
  assert.equal(received[0].contentType, 'application/tlsrpt+gzip');
  assert.equal(received[0].path, '/tlsrpt');
  const report = JSON.parse(gunzipSync(received[0].body).toString('utf8'));
  assert.equal(report['report-id'], '2026-11-20.rpt.test@mta.postline.test');
  assert.deepEqual(report.policies[0].summary, { 'total-successful-session-count': 1, 'total-failure-session-count': 1 });
});

test("the daily run sends each of yesterday's reports once across workers; a private rua is refused unless allowed", async () => {
  received = [];
  const port = (receiver.address() as AddressInfo).port;
  await recordTlsSessions(pool, [{ domain: 'daily.test', at, policy: { type: 'sts', text: POLICY }, result: 'success' }]);
  dnsServer.setRecords('_smtp._tls.daily.test', 'TXT', [`v=TLSRPTv1; rua=https://reports.rpt.test:${port}/daily`]);
  const dns = createMailDns({ servers: [dnsServer.address] });
  const deps = {
    db: pool,
    dns,
    reporter: { organization: 'o', contact: 'c@d.test', host: 'h.test' },
    allowPrivate: false,
    mail: { from: null, secret: 'unused', mailer: createReportMailer(testConfig(), dns) },
    now: () => new Date('2026-11-21T00:10:00Z'),
  };
  const [first, second] = await Promise.all([sendDueTlsReports(deps), sendDueTlsReports(deps)]);
  const all = [...first, ...second].filter((d) => d.domain === 'daily.test');
  assert.equal(all.length, 1, 'one worker claimed it');
  assert.equal(all[0].results[0].delivered, false);
  assert.match(all[0].results[0].detail, /127\.0\.0\.120, which is not a public address/);
  assert.equal(received.length, 0);
  const { rows } = await pool.query("SELECT outcome FROM tls_reports_sent WHERE domain = 'daily.test' AND day = '2026-11-20'");
  assert.equal(rows[0].outcome.results[0].delivered, false);
  assert.equal(rows[0].outcome.results[0].retry, false, 'a refused address is not tried again');
  assert.deepEqual(await sendDueTlsReports(deps), [], 'not sent again');
});

test('a failure of ours before any address is tried is kept as the outcome and the whole report tried again later, not left claimed', async () => {
  const day = new Date('2026-11-22T12:00:00Z');
  await recordTlsSessions(pool, [{ domain: 'broken.test', at: day, policy: { type: 'sts', text: POLICY }, result: 'success' }]);
  dnsServer.setRecords('_smtp._tls.broken.test', 'TXT', ['v=TLSRPTv1; rua=https://reports.rpt.test/broken']);
  const real = createMailDns({ servers: [dnsServer.address] });
  let failNext = true;
  // The first lookup fails with an error that is no DNS answer (as a bug or a lost database would).
  const dns = {
    resolveHostAddresses: real.resolveHostAddresses.bind(real),
    resolveTxt: async (name: string) => {
      if (failNext && name === '_smtp._tls.broken.test') {
        failNext = false;
        throw new Error('resolver exploded');
      }
      return real.resolveTxt(name);
    },
  };
  const undelivered: string[] = [];
  let now = new Date('2026-11-23T00:10:00Z');
  const deps = {
    db: pool,
    dns,
    reporter: { organization: 'o', contact: 'c@d.test', host: 'h.test' },
    allowPrivate: false,
    mail: { from: null, secret: 'unused', mailer: createReportMailer(testConfig(), real) },
    now: () => now,
    onUndelivered: (_d: unknown, r: { uri: string; detail: string }) => void undelivered.push(`${r.uri}: ${r.detail}`),
  };
  const [first] = (await sendDueTlsReports(deps)).filter((d) => d.domain === 'broken.test');
  assert.equal(first.failed, 'resolver exploded');
  assert.deepEqual(undelivered, ['(every address): resolver exploded'], 'logged');
  const kept = await pool.query("SELECT outcome, retry_at FROM tls_reports_sent WHERE domain = 'broken.test' AND day = '2026-11-22'");
  assert.equal(kept.rows[0].outcome.failed, 'resolver exploded');
  assert.equal(kept.rows[0].retry_at.toISOString(), '2026-11-23T00:40:00.000Z', 'tried again after 30 minutes');
  assert.deepEqual((await sendDueTlsReports(deps)).filter((d) => d.domain === 'broken.test'), [], 'not before');
  now = new Date('2026-11-23T00:41:00Z');
  const [second] = (await sendDueTlsReports(deps)).filter((d) => d.domain === 'broken.test');
  // Every address of the record is tried this time (this one refused: not a public address).
  assert.equal(second.failed, undefined);
  assert.deepEqual(second.results.map((r) => r.uri), ['https://reports.rpt.test/broken']);
  assert.match(second.results[0].detail, /127\.0\.0\.120, which is not a public address/);
});
