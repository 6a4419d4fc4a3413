import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { dkimVerify } from 'mailauth';
import { simpleParser } from 'mailparser';
import pino from 'pino';
import { createMailDns, createResolver, toMailauthResolver } from '../../src/mail/dns.js';
import { recordTlsSessions, tlsReportFor } from '../../src/domain/tls-reports.js';
import { sendDueTlsReports, type TlsReportSendDeps } from '../../src/delivery/tls-reports/send.js';
import { tlsReportDeps } from '../../src/delivery/tls-reports/deps.js';
import { createReportMailer } from '../../src/delivery/report-mailer.js';
import { mailtoAddress } from '../../src/delivery/tls-reports/mailto.js';
import { startWorkers } from '../../src/workers/index.js';
import { ManualClock, createTestAccount, testConfig } from '../helpers/app.js';
import { testDatabase } from '../helpers/db.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startSmtpMx, type TestSmtpMx } from '../helpers/smtp-mx.js';

const POLICY = 'version: STSv1\nmode: enforce\nmx: mx.rcpt.test\nmax_age: 86400\n';
const DAY = '2026-11-20';
const at = new Date(`${DAY}T12:00:00Z`);

const { pool } = await testDatabase();
let dnsServer: TestDnsServer;
let mx: TestSmtpMx;
let config: ReturnType<typeof testConfig>;
const clock = new ManualClock('2026-11-21T00:10:00.000Z');
const logged: { rua: string; detail: string; retry: boolean; msg: string }[] = [];
let deps: TlsReportSendDeps;

before(async () => {
  dnsServer = await startDnsServer();
  mx = await startSmtpMx({ address: '127.0.0.1' });
  config = testConfig({
    POSTLINE_DELIVERY: 'mx', POSTLINE_MX_PORT: String(mx.port), POSTLINE_DNS_SERVERS: dnsServer.address,
    POSTLINE_BASE_URL: 'https://mta.postline.test', POSTLINE_TLSRPT_SEND: 'true', POSTLINE_TLSRPT_FROM: 'tls-reports@reports.postline.test',
  });
  // The deployment's own sender domain, verified like any other; its DKIM keys are published.
  const operator = await createTestAccount(pool, 'Operator');
  const signing = await createVerifiedDomain(pool, operator.accountId, 'reports.postline.test', config.secret);
  dnsServer.setRecords(signing.rsaRecordName, 'TXT', [signing.rsaTxt]);
  dnsServer.setRecords(signing.edRecordName, 'TXT', [signing.edTxt]);
  // rcpt.test asks for reports by mail, and takes mail at the loopback MX.
  dnsServer.setRecords('rcpt.test', 'MX', [{ exchange: 'mx.rcpt.test', priority: 10 }]);
  dnsServer.setRecords('mx.rcpt.test', 'A', ['127.0.0.1']);
  dnsServer.setRecords('_smtp._tls.rcpt.test', 'TXT', ['v=TLSRPTv1; rua=mailto:tlsrpt@rcpt.test']);
  const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  deps = tlsReportDeps({ config, pool, clock, log });
});
after(async () => {
  await deps.mail.mailer.close();
  await mx.close();
  await dnsServer.close();
});

test('mailto addresses: one address, percent-decoded, nothing that could break a header', () => {
  assert.equal(mailtoAddress('mailto:tls@rcpt.test'), 'tls@rcpt.test');
  assert.equal(mailtoAddress('mailto:tls%2Breports@rcpt.test?subject=x'), 'tls+reports@rcpt.test');
  assert.equal(mailtoAddress('mailto:a@b.test,c@d.test'), null);
  assert.equal(mailtoAddress('mailto:a@b.test%0D%0ABcc:x@y.test'), null);
  assert.equal(mailtoAddress('mailto:%E0'), null);
  assert.equal(mailtoAddress('mailto:nobody'), null);
});

test("a mailto rua gets the day's report as a DKIM-signed multipart/report mail, once", async () => {
  await recordTlsSessions(pool, [
    { domain: 'rcpt.test', at, policy: { type: 'sts', text: POLICY }, result: 'success' },
    { domain: 'rcpt.test', at, policy: { type: 'sts', text: POLICY }, result: 'certificate-expired', receivingMx: 'mx.rcpt.test', receivingIp: '127.0.0.1' },
  ]);
  const [delivery] = await sendDueTlsReports(deps);
  assert.equal(delivery.domain, 'rcpt.test');
  assert.deepEqual(delivery.results.map((r) => [r.uri, r.delivered]), [['mailto:tlsrpt@rcpt.test', true]], JSON.stringify(delivery));
  assert.equal(mx.messages.length, 1);
  const [received] = mx.messages;
  assert.deepEqual(received.envelope, { from: 'tls-reports@reports.postline.test', to: ['tlsrpt@rcpt.test'] });
  assert.equal(received.ehlo, 'mta.postline.test');

  // The structure RFC 8460 §5.3 asks for, as the receiver parses it.
  const mail = await simpleParser(received.raw);
  assert.equal(mail.headers.get('tls-report-domain'), 'rcpt.test');
  assert.equal(mail.headers.get('tls-report-submitter'), 'mta.postline.test');
  assert.equal(mail.subject, `Report Domain: rcpt.test Submitter: mta.postline.test Report-ID: <${DAY}.rcpt.test@mta.postline.test>`);
  const contentType = mail.headers.get('content-type') as { value: string; params: Record<string, string> };
  assert.equal(contentType.value, 'multipart/report');
  assert.equal(contentType.params['report-type'], 'tlsrpt');
  assert.match(mail.text!, /SMTP TLS report \(RFC 8460\) for rcpt\.test/);
  assert.match(mail.text!, /1 successful, 1 failed/);
  assert.equal(mail.attachments.length, 1);
  const [attachment] = mail.attachments;
  assert.equal(attachment.contentType, 'application/tlsrpt+gzip');
  assert.equal(attachment.contentDisposition, 'attachment');
  const start = Date.parse(`${DAY}T00:00:00Z`) / 1000;
  assert.equal(attachment.filename, `mta.postline.test!rcpt.test!${start}!${start + 86_399}!20261120rcpttest.json.gz`);
  const report = JSON.parse(gunzipSync(attachment.content).toString('utf8'));
  const reporter = { ...config.tlsReports, host: 'mta.postline.test' };
  assert.deepEqual(report, await tlsReportFor(pool, reporter, 'rcpt.test', DAY));
  assert.equal(report['report-id'], `${DAY}.rcpt.test@mta.postline.test`);
  assert.deepEqual(report.policies[0].summary, { 'total-successful-session-count': 1, 'total-failure-session-count': 1 });
  assert.equal(report.policies[0]['failure-details']![0]['result-type'], 'certificate-expired');

  // Both signatures verify on the bytes received, with the keys as published in DNS; they
  // cover the report headers.
  const verified = await dkimVerify(received.raw, { resolver: toMailauthResolver(createResolver([dnsServer.address])) });
  assert.equal(verified.results.length, 2);
  for (const r of verified.results) {
    assert.equal(r.status.result, 'pass', r.info);
    assert.equal(r.signingDomain ?? '', 'reports.postline.test');
  }
  const signature = received.raw.toString('latin1').match(/^DKIM-Signature:[\s\S]*?(?=^\S)/m)![0].replace(/\s+/g, '');
  const signed = signature.match(/;h=([^;]+);/)![1].toLowerCase().split(':');
  assert.ok(signed.includes('tls-report-domain') && signed.includes('tls-report-submitter') && signed.includes('from'), signed.join());

  // Once per domain and day, however many runs and workers.
  const [a, b] = await Promise.all([sendDueTlsReports(deps), sendDueTlsReports(deps)]);
  assert.deepEqual([...a, ...b], []);
  assert.equal(mx.messages.length, 1);
  const { rows } = await pool.query("SELECT outcome, attempts, retry_at FROM tls_reports_sent WHERE domain = 'rcpt.test'");
  assert.deepEqual([rows[0].outcome.results[0].delivered, rows[0].attempts, rows[0].retry_at], [true, 1, null]);
});

test('an MX that defers: logged, tried again later at that address only, until it takes the report', async () => {
  const day = '2026-11-21';
  clock.set('2026-11-22T00:05:00.000Z');
  await recordTlsSessions(pool, [{ domain: 'later.test', at: new Date(`${day}T09:00:00Z`), policy: { type: 'sts', text: POLICY }, result: 'success' }]);
  dnsServer.setRecords('later.test', 'MX', [{ exchange: 'mx.rcpt.test', priority: 10 }]);
  // A second rua that refuses for good: not tried again.
  dnsServer.setRecords('_smtp._tls.later.test', 'TXT', ['v=TLSRPTv1; rua=mailto:tls@later.test,mailto:gone@later.test']);
  let deferring = true;
  mx.setRule((rcpt) => (rcpt === 'gone@later.test' ? 'reject' : deferring && rcpt === 'tls@later.test' ? 'defer' : 'accept'));
  const before = mx.messages.length;

  const [first] = await sendDueTlsReports(deps);
  assert.deepEqual(first.results.map((r) => [r.uri, r.delivered, r.retry]), [['mailto:tls@later.test', false, true], ['mailto:gone@later.test', false, false]]);
  assert.match(first.results[0].detail, /4\.3\.0/);
  assert.deepEqual(logged.filter((l) => l.rua.includes('later.test')).map((l) => [l.msg, l.rua, l.retry]), [
    ['TLS report not delivered', 'mailto:tls@later.test', true],
    ['TLS report not delivered', 'mailto:gone@later.test', false],
  ]);
  const row = async () => (await pool.query("SELECT attempts, retry_at, outcome FROM tls_reports_sent WHERE domain = 'later.test'")).rows[0];
  assert.equal((await row()).retry_at.toISOString(), '2026-11-22T00:35:00.000Z', 'the first retry 30 minutes later');

  // Not yet due: nothing.
  clock.set('2026-11-22T00:20:00.000Z');
  assert.deepEqual(await sendDueTlsReports(deps), []);
  // Due, still deferring: the next try an hour later.
  clock.set('2026-11-22T00:36:00.000Z');
  const [second] = await sendDueTlsReports(deps);
  assert.equal(second.results[0].retry, true);
  assert.equal((await row()).attempts, 2);
  assert.equal((await row()).retry_at.toISOString(), '2026-11-22T01:36:00.000Z');
  // The MX takes it now: delivered to that address, the refusing one not tried again.
  deferring = false;
  clock.set('2026-11-22T01:40:00.000Z');
  const [third] = await sendDueTlsReports(deps);
  assert.deepEqual(third.results.map((r) => [r.uri, r.delivered, r.retry ?? false]), [['mailto:tls@later.test', true, false], ['mailto:gone@later.test', false, false]]);
  const got = mx.messages.slice(before).filter((m) => m.envelope.to[0] === 'tls@later.test');
  assert.equal(got.length, 1);
  assert.equal((await row()).retry_at, null);
  clock.set('2026-11-22T06:00:00.000Z');
  assert.deepEqual(await sendDueTlsReports(deps), [], 'done');
  mx.setRule(() => 'accept');
});

test('an unreachable MX is a temporary failure; after the last try it stops, never throwing', async () => {
  const day = '2026-11-22';
  clock.set('2026-11-23T00:05:00.000Z');
  await recordTlsSessions(pool, [{ domain: 'down.test', at: new Date(`${day}T09:00:00Z`), policy: { type: 'sts', text: POLICY }, result: 'success' }]);
  dnsServer.setRecords('down.test', 'MX', [{ exchange: 'mx.down.test', priority: 10 }]);
  dnsServer.setRecords('mx.down.test', 'A', ['127.0.0.250']); // nothing listens there
  dnsServer.setRecords('_smtp._tls.down.test', 'TXT', ['v=TLSRPTv1; rua=mailto:tls@down.test']);
  const tries: string[] = [];
  for (let i = 0; i < 8; i++) {
    for (const d of await sendDueTlsReports(deps)) tries.push(`${d.results[0].delivered}:${d.results[0].retry}`);
    clock.advance(8 * 3_600_000);
  }
  assert.deepEqual(tries, ['false:true', 'false:true', 'false:true', 'false:true', 'false:false'], 'five tries, the last not scheduling another');
  const { rows } = await pool.query("SELECT attempts, retry_at FROM tls_reports_sent WHERE domain = 'down.test'");
  assert.deepEqual([rows[0].attempts, rows[0].retry_at], [5, null]);
});

test('without POSTLINE_TLSRPT_FROM, or with a From domain not verified here, mailto is recorded as not sent', async () => {
  clock.set('2026-11-24T00:05:00.000Z');
  await recordTlsSessions(pool, [{ domain: 'rcpt.test', at: new Date('2026-11-23T09:00:00Z'), policy: { type: 'sts', text: POLICY }, result: 'success' }]);
  const before = mx.messages.length;
  const noFrom = { ...deps, mail: { ...deps.mail, from: null } };
  const [d] = await sendDueTlsReports(noFrom);
  assert.deepEqual([d.results[0].delivered, d.results[0].retry], [false, false]);
  assert.match(d.results[0].detail, /POSTLINE_TLSRPT_FROM/);

  const unverified = { ...deps, mail: { ...deps.mail, from: 'reports@elsewhere.test' } };
  const { sendTlsReport } = await import('../../src/delivery/tls-reports/send.js');
  const e = await sendTlsReport(unverified, 'rcpt.test', '2026-11-23');
  assert.match(e.results[0].detail, /elsewhere\.test is not a verified sender domain/);
  // Keys that no longer decrypt (POSTLINE_SECRET changed): not sent, worth another try, no throw.
  const wrongSecret = { ...deps, mail: { ...deps.mail, secret: 'another-secret-0123456789abcdef' } };
  const f = await sendTlsReport(wrongSecret, 'rcpt.test', '2026-11-23');
  assert.deepEqual([f.results[0].delivered, f.results[0].retry], [false, true]);
  assert.match(f.results[0].detail, /could not sign the report with reports\.postline\.test's keys/);
  assert.equal(mx.messages.length, before, 'nothing sent unsigned');
});

test('POSTLINE_TLSRPT_FROM must be an address; the mailer delivers nothing in capture mode', async () => {
  assert.throws(() => testConfig({ POSTLINE_TLSRPT_FROM: 'nope' }), /POSTLINE_TLSRPT_FROM: must be an email address/);
  assert.throws(() => testConfig({ POSTLINE_TLSRPT_FROM: 'a@b.test\r\nBcc: x@y.test' }), /POSTLINE_TLSRPT_FROM/);
  assert.equal(testConfig({}).tlsReports.from, null);
  const capture = createReportMailer(testConfig({ POSTLINE_DELIVERY: 'capture' }), createMailDns({ servers: [dnsServer.address] }));
  const r = await capture.send({ from: 'a@b.test', to: 'tls@rcpt.test' }, Buffer.from('x'));
  assert.deepEqual([r.delivered, r.retry], [false, false]);
  await capture.close();
});

test('the worker role sends due reports with POSTLINE_TLSRPT_SEND=true, and nothing without it', async () => {
  const workerClock = new ManualClock('2026-11-26T00:05:00.000Z');
  await recordTlsSessions(pool, [{ domain: 'rcpt.test', at: new Date('2026-11-25T09:00:00Z'), policy: { type: 'sts', text: POLICY }, result: 'success' }]);
  const sentRows = async () => (await pool.query("SELECT count(*)::int AS n FROM tls_reports_sent WHERE day = '2026-11-25'")).rows[0].n;
  const runWorkersOnce = async (send: boolean) => {
    const workerConfig = { ...config, tlsReports: { ...config.tlsReports, send } };
    const workers = await startWorkers({ config: workerConfig, pool, clock: workerClock, log: pino({ level: 'silent' }) });
    // Every loop's first run is a 0 ms timer made at start; one made now fires after them, and
    // stop() waits for the runs in progress.
    await new Promise((r) => setTimeout(r, 0));
    await workers.stop();
  };
  const before = mx.messages.length;
  await runWorkersOnce(false);
  assert.equal(await sentRows(), 0, 'switched off: not even claimed');
  assert.equal(mx.messages.length, before);
  await runWorkersOnce(true);
  assert.equal(await sentRows(), 1);
  assert.equal(mx.messages.length, before + 1);
  assert.equal(mx.messages.at(-1)!.envelope.to[0], 'tlsrpt@rcpt.test');
});
