import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { buildTlsReport } from '../../src/mail/tls-rpt/report.js';
import { parseReportDay, recordTlsSessions, sessionCount, tlsReportFor, type TlsSession } from '../../src/domain/tls-reports.js';
import { purgeTlsSessions } from '../../src/db/queries/tls-reports.js';
import { runMaintenance } from '../../src/workers/maintenance.js';
import { testDatabase } from '../helpers/db.js';
import { runCli } from '../helpers/cli.js';

const POLICY = 'version: STSv1\r\nmode: enforce\r\nmx: mx1.rpt.test\r\nmx: *.backup.rpt.test\r\nmax_age: 86400\r\n';
const reporter = { organization: 'Postline Test', contact: 'tls-reports@postline.test', host: 'mta.postline.test' };

const { pool, url } = await testDatabase();

const session = (over: Partial<TlsSession>): TlsSession => ({
  domain: 'rpt.test',
  at: new Date('2026-11-20T10:00:00Z'),
  policy: { type: 'sts', text: POLICY },
  result: 'success',
  ...over,
});

describe('buildTlsReport', () => {
  test('an RFC 8460 document: date range of the UTC day, policy lines and mx patterns, summary, failure details', () => {
    const counts = [
      sessionCount(session({})),
      { ...sessionCount(session({ result: 'starttls-not-supported', receivingMx: 'mx1.rpt.test', receivingIp: '127.0.0.51', sendingIp: '127.0.0.61' })), sessions: 3 },
    ];
    counts[0].sessions = 40;
    const report = buildTlsReport({ organization: 'Postline Test', contact: 'tls@postline.test', reporterHost: 'mta.postline.test', domain: 'rpt.test', day: '2026-11-20', counts });
    assert.deepEqual(report, {
      'organization-name': 'Postline Test',
      'date-range': { 'start-datetime': '2026-11-20T00:00:00Z', 'end-datetime': '2026-11-20T23:59:59Z' },
      'contact-info': 'tls@postline.test',
      'report-id': '2026-11-20.rpt.test@mta.postline.test',
      policies: [{
        policy: {
          'policy-type': 'sts',
          'policy-domain': 'rpt.test',
          'policy-string': ['version: STSv1', 'mode: enforce', 'mx: mx1.rpt.test', 'mx: *.backup.rpt.test', 'max_age: 86400'],
          'mx-host': ['mx1.rpt.test', '*.backup.rpt.test'],
        },
        summary: { 'total-successful-session-count': 40, 'total-failure-session-count': 3 },
        'failure-details': [{
          'result-type': 'starttls-not-supported',
          'sending-mta-ip': '127.0.0.61',
          'receiving-mx-hostname': 'mx1.rpt.test',
          'receiving-ip': '127.0.0.51',
          'failed-session-count': 3,
        }],
      }],
    });
  });

  test('no-policy-found sessions form their own policy entry without policy-string', () => {
    const report = buildTlsReport({
      organization: 'o', contact: 'c@d.test', reporterHost: 'h.test', domain: 'rpt.test', day: '2026-11-20',
      counts: [sessionCount(session({ policy: { type: 'no-policy-found' } }))],
    });
    assert.deepEqual(report.policies, [{
      policy: { 'policy-type': 'no-policy-found', 'policy-domain': 'rpt.test' },
      summary: { 'total-successful-session-count': 1, 'total-failure-session-count': 0 },
    }]);
  });
});

describe('recording and reporting', () => {
  test('sessions add up per domain and UTC day, across batches and within one', async () => {
    await recordTlsSessions(pool, [session({}), session({}), session({ result: 'certificate-host-mismatch', receivingMx: 'mx1.rpt.test', receivingIp: '127.0.0.51' })]);
    await recordTlsSessions(pool, [session({}), session({ result: 'certificate-host-mismatch', receivingMx: 'mx1.rpt.test', receivingIp: '127.0.0.51' })]);
    // The last millisecond of the day counts on that day, the next one on the next.
    await recordTlsSessions(pool, [session({ at: new Date('2026-11-20T23:59:59.999Z') }), session({ at: new Date('2026-11-21T00:00:00Z') })]);
    const report = await tlsReportFor(pool, reporter, 'rpt.test', '2026-11-20');
    assert.equal(report.policies.length, 1);
    assert.deepEqual(report.policies[0].summary, { 'total-successful-session-count': 4, 'total-failure-session-count': 2 });
    assert.deepEqual(report.policies[0]['failure-details'], [{ 'result-type': 'certificate-host-mismatch', 'receiving-mx-hostname': 'mx1.rpt.test', 'receiving-ip': '127.0.0.51', 'failed-session-count': 2 }]);
    const next = await tlsReportFor(pool, reporter, 'rpt.test', '2026-11-21');
    assert.equal(next.policies[0].summary['total-successful-session-count'], 1);
  });

  test('successes are counted without host details: one row however many hosts', async () => {
    await recordTlsSessions(pool, [
      session({ domain: 'many.test', receivingMx: 'a.many.test', receivingIp: '127.0.0.1' }),
      session({ domain: 'many.test', receivingMx: 'b.many.test', receivingIp: '127.0.0.2' }),
    ]);
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM tls_report_sessions WHERE domain = 'many.test'");
    assert.equal(rows[0].n, 1);
  });

  test('a policy change in the day: two policy entries', async () => {
    await recordTlsSessions(pool, [session({ domain: 'changed.test' }), session({ domain: 'changed.test', policy: { type: 'sts', text: POLICY.replace('enforce', 'testing') } })]);
    const report = await tlsReportFor(pool, reporter, 'changed.test', '2026-11-20');
    assert.equal(report.policies.length, 2);
    assert.deepEqual(report.policies.map((p) => p.policy['policy-string']![1]).sort(), ['mode: enforce', 'mode: testing']);
  });

  test('a day without sessions: a report with no policies', async () => {
    const report = await tlsReportFor(pool, reporter, 'rpt.test', '2026-11-01');
    assert.deepEqual(report.policies, []);
  });

  test('maintenance deletes counts older than 30 days and keeps the 30th', async () => {
    await recordTlsSessions(pool, [
      session({ domain: 'old.test', at: new Date('2026-10-20T12:00:00Z') }),
      session({ domain: 'old.test', at: new Date('2026-10-21T12:00:00Z') }),
    ]);
    const result = await runMaintenance(pool, new ManualClock('2026-11-20T10:00:00Z'));
    assert.equal(result.tlsReportRows, 1);
    const { rows } = await pool.query("SELECT to_char(day, 'YYYY-MM-DD') AS day FROM tls_report_sessions WHERE domain = 'old.test'");
    assert.deepEqual(rows.map((r) => r.day), ['2026-10-21']);
    assert.equal(await purgeTlsSessions(pool, '2026-10-21'), 0);
  });
});

describe('parseReportDay', () => {
  test('a calendar day only', () => {
    assert.equal(parseReportDay('2026-02-28'), '2026-02-28');
    for (const bad of ['2026-02-30', '2026-2-3', 'yesterday', '2026-11-20T00:00:00Z', '']) {
      assert.throws(() => parseReportDay(bad), /day must be a calendar day/);
    }
  });
});

describe('configuration', () => {
  const base = { POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-tlsrpt-')), POSTLINE_BASE_URL: 'https://mail.acme.test' };
  test('defaults: the base URL host names the organisation, postmaster@ it is the contact, sending is off', () => {
    assert.deepEqual(loadConfig(base).tlsReports, { organization: 'mail.acme.test', contact: 'postmaster@mail.acme.test', send: false, from: null });
  });
  test('a contact that is not an address stops start-up naming the variable', () => {
    assert.throws(() => loadConfig({ ...base, POSTLINE_TLSRPT_CONTACT: 'nobody' }), (e: unknown) => e instanceof ConfigError && e.variable === 'POSTLINE_TLSRPT_CONTACT');
  });
});

describe('postline tls-report', () => {
  const env = { DATABASE_URL: url, POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-cli-')), LOG_LEVEL: 'silent', POSTLINE_BASE_URL: 'https://mta.postline.test', POSTLINE_TLSRPT_ORG: 'Postline Test' };

  test('--json prints the RFC 8460 report of the domain and day', async () => {
    await recordTlsSessions(pool, [session({ domain: 'cli.test' }), session({ domain: 'cli.test', result: 'certificate-expired', receivingMx: 'mx1.cli.test' })]);
    const res = await runCli(['tls-report', 'CLI.test', '--day', '2026-11-20', '--json'], env);
    assert.equal(res.code, 0, res.stderr);
    const report = JSON.parse(res.stdout);
    assert.equal(report['organization-name'], 'Postline Test');
    assert.equal(report['contact-info'], 'postmaster@mta.postline.test');
    assert.equal(report['report-id'], '2026-11-20.cli.test@mta.postline.test');
    assert.deepEqual(report.policies[0].summary, { 'total-successful-session-count': 1, 'total-failure-session-count': 1 });
    assert.equal(report.policies[0]['failure-details'][0]['result-type'], 'certificate-expired');

    const readable = await runCli(['tls-report', 'cli.test', '--day', '2026-11-20'], env);
    assert.match(readable.stdout, /cli\.test 2026-11-20 policy sts \(mx: mx1\.rpt\.test, \*\.backup\.rpt\.test\): 1 successful, 1 failed/);
    assert.match(readable.stdout, /1 × certificate-expired at mx1\.cli\.test/);
  });

  test('a bad day or domain is one clear line and exit 1', async () => {
    const day = await runCli(['tls-report', 'cli.test', '--day', '2026-13-01'], env);
    assert.equal(day.code, 1);
    assert.match(day.stderr, /^error: day must be a calendar day as YYYY-MM-DD/);
    const domain = await runCli(['tls-report', 'not a domain', '--day', '2026-11-20'], env);
    assert.equal(domain.code, 1);
    assert.match(domain.stderr, /^error: "not a domain" is not a domain name/);
  });
});
