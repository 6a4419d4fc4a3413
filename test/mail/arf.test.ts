import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseArf, type ArfParseResult, type ArfReport } from '../../src/mail/arf.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url));

function report(result: ArfParseResult): ArfReport {
  assert.ok(result.ok, `expected a report, got ${JSON.stringify(result)}`);
  return result.report;
}

/** A minimal ARF around the given feedback fields and third part (CRLF, as on the wire). */
function arf(fields: string, third = '', opts: { contentType?: string } = {}): string {
  return [
    'From: <fbl@isp.example>',
    'To: <fbl@bounces.example.com>',
    'Subject: FW: report',
    'MIME-Version: 1.0',
    `Content-Type: ${opts.contentType ?? 'multipart/report; report-type=feedback-report; boundary="b1"'}`,
    '',
    '--b1',
    'Content-Type: text/plain',
    '',
    'An abuse report.',
    '',
    '--b1',
    'Content-Type: message/feedback-report',
    '',
    fields,
    '',
    ...(third ? ['--b1', third] : []),
    '--b1--',
    '',
  ].join('\r\n');
}

test('arf: the RFC 5965 Appendix B example (message/rfc822, inline)', async () => {
  const r = report(await parseArf(fixture('arf-rfc5965-example.eml')));
  assert.equal(r.feedbackType, 'abuse');
  assert.equal(r.userAgent, 'SomeGenerator/1.0');
  assert.equal(r.version, '1');
  assert.equal(r.originalMailFrom, 'somespammer@example.net');
  assert.equal(r.originalRcptTo, 'user@example.com');
  assert.equal(r.arrivalDate, 'Thu, 8 Mar 2005 14:00:00 EDT');
  assert.equal(r.reportingMta, 'mail.example.com');
  assert.equal(r.sourceIp, '192.0.2.1');
  assert.deepEqual(r.reportedDomains, ['example.net']);
  assert.deepEqual(r.reportedUris, ['http://example.net/earn_money.html', 'mailto:user@example.com']);
  // The RFC writes this Message-ID without angle brackets; it comes back normalised.
  assert.equal(r.originalMessageId, '<8787KJKJ3K4J3K4J3K4J3.mail@example.net>');
  assert.equal(r.originalFrom, 'somespammer@example.net');
  assert.equal(r.originalTo, null, '"<Undisclosed Recipients>" is no address');
  assert.equal(r.originalSubject, 'Earn money');
  assert.equal(r.recipient, 'user@example.com');
  // Folded field unfolded; unknown fields kept.
  assert.deepEqual(r.fields['authentication-results'], ['mail.example.com; spf=fail smtp.mail=somespammer@example.com']);
  assert.deepEqual(r.fields['removal-recipient'], ['user@example.com']);
});

test('arf: Yahoo/AOL-like report with the original as message/rfc822, no Original-Rcpt-To', async () => {
  const r = report(await parseArf(fixture('arf-rfc822.eml')));
  assert.equal(r.feedbackType, 'abuse');
  assert.equal(r.userAgent, 'Yahoo!-Mail-Feedback/2.0');
  assert.equal(r.version, '0.1');
  assert.equal(r.originalMailFrom, 'bounces+msg_0190aaaa0000700080000000000000a1@example.com');
  assert.equal(r.originalRcptTo, null);
  assert.equal(r.arrivalDate, 'Tue, 12 Nov 2024 10:15:31 +0000');
  assert.equal(r.sourceIp, '203.0.113.25');
  assert.deepEqual(r.reportedDomains, ['example.com']);
  assert.equal(r.originalMessageId, '<msg_0190aaaa0000700080000000000000a1@example.com>');
  assert.equal(r.originalFrom, 'news@example.com');
  assert.equal(r.originalTo, 'jane.doe@yahoo.com');
  assert.equal(r.originalSubject, 'Your November receipt');
  assert.equal(r.recipient, 'jane.doe@yahoo.com', 'falls back to the original To');
});

test('arf: Microsoft JMRP-like report with text/rfc822-headers, folded and encoded headers', async () => {
  const r = report(await parseArf(fixture('arf-headers-only.eml')));
  assert.equal(r.feedbackType, 'abuse');
  assert.equal(r.userAgent, 'Hotmail FBL', 'lower-case field names are fine');
  assert.equal(r.arrivalDate, 'Tue, 12 Nov 2024 12:21:47 -0800', 'historic Received-Date');
  assert.equal(r.originalMessageId, '<msg_0190aaaa0000700080000000000000b2@example.com>', 'folded Message-ID');
  assert.equal(r.originalFrom, 'news@example.com');
  assert.equal(r.originalTo, 'john.smith@outlook.com', 'folded To with a display name');
  assert.equal(r.originalSubject, 'Your order has shipped 📦 (tracking inside)', 'RFC 2047 + folding');
  // X-HmXmrOriginalRecipient of the original, not the decoy one on the report itself.
  assert.equal(r.recipient, 'john.smith@outlook.com');
});

test('arf: Original-Rcpt-To beats X-HmXmrOriginalRecipient, which beats the original To', async () => {
  const third = 'Content-Type: text/rfc822-headers\r\n\r\nX-HmXmrOriginalRecipient: <hm@outlook.example>\r\nTo: to@outlook.example\r\nMessage-ID: <msg_1@example.com>\r\n';
  const withRcpt = report(await parseArf(arf('Feedback-Type: abuse\r\nOriginal-Rcpt-To: <rcpt@outlook.example>', third)));
  assert.equal(withRcpt.recipient, 'rcpt@outlook.example');
  const withoutRcpt = report(await parseArf(arf('Feedback-Type: abuse', third)));
  assert.equal(withoutRcpt.recipient, 'hm@outlook.example');
  assert.equal(withoutRcpt.originalTo, 'to@outlook.example');
});

test('arf: a report without the original part still parses, with no original fields', async () => {
  const r = report(await parseArf(arf('Feedback-Type: fraud\r\nUser-Agent: X/1\r\nVersion: 1\r\nOriginal-Rcpt-To: a@b.example')));
  assert.equal(r.feedbackType, 'fraud');
  assert.equal(r.originalMessageId, null);
  assert.equal(r.originalTo, null);
  assert.equal(r.recipient, 'a@b.example');
});

test('arf: Feedback-Type is lower-cased; repeated fields and blank lines inside the block are tolerated', async () => {
  const r = report(await parseArf(arf('Feedback-Type: Not-Spam\r\nReported-Domain: a.example\r\n\r\nReported-Domain: b.example')));
  assert.equal(r.feedbackType, 'not-spam');
  assert.deepEqual(r.reportedDomains, ['a.example', 'b.example']);
});

test('arf: the message/rfc822 part as an attachment (Content-Disposition: attachment) works too', async () => {
  const third = 'Content-Type: message/rfc822\r\nContent-Disposition: attachment; filename="original.eml"\r\n\r\nFrom: a@example.com\r\nTo: b@example.net\r\nMessage-ID: <msg_0190aaaa0000700080000000000000c9@example.com>\r\n\r\nbody\r\n';
  const r = report(await parseArf(arf('Feedback-Type: abuse', third)));
  assert.equal(r.originalMessageId, '<msg_0190aaaa0000700080000000000000c9@example.com>');
  assert.equal(r.originalTo, 'b@example.net');
});

test('arf: LF-only line endings parse the same', async () => {
  const r = report(await parseArf(fixture('arf-rfc822.eml').toString('utf8').replace(/\r\n/g, '\n')));
  assert.equal(r.originalMessageId, '<msg_0190aaaa0000700080000000000000a1@example.com>');
  assert.equal(r.feedbackType, 'abuse');
});

test('arf: a plain forwarded complaint is refused as not a multipart/report', async () => {
  const result = await parseArf(fixture('arf-broken.eml'));
  assert.equal(result.ok, false);
  assert.ok(!result.ok);
  assert.equal(result.reason, 'not_multipart_report');
  assert.match(result.detail, /text\/plain/);
});

test('arf: a multipart/report without a feedback-report part (e.g. a DSN) is refused', async () => {
  for (const raw of [fixture('dsn-hard-550.eml'), arf('', '', {}).replace('message/feedback-report', 'text/plain')]) {
    const result = await parseArf(raw);
    assert.ok(!result.ok);
    assert.equal(result.reason, 'no_feedback_report');
  }
});

test('arf: a feedback report without Feedback-Type is refused', async () => {
  const result = await parseArf(arf('User-Agent: SomeGenerator/1.0\r\nVersion: 1\r\nOriginal-Rcpt-To: <a@b.example>'));
  assert.ok(!result.ok);
  assert.equal(result.reason, 'missing_feedback_type');
});

test('arf: garbage and empty input are refusals, not exceptions', async () => {
  for (const raw of ['', '\r\n\r\n', 'not a message at all', Buffer.from([0, 1, 2, 255, 254])]) {
    const result = await parseArf(raw);
    assert.equal(result.ok, false);
  }
});
