import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { classifyDsnRecipient, parseDsn, parseFieldBlocks, type Dsn, type DsnParseResult } from '../../src/mail/dsn.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url));

function dsn(result: DsnParseResult): Dsn {
  assert.ok(result.ok, `expected a DSN, got ${JSON.stringify(result)}`);
  return result.dsn;
}

/** A minimal DSN around the given delivery-status body and optional third part. */
function report(status: string, third = '', contentType = 'multipart/report; report-type=delivery-status; boundary="b1"', extraHeaders = ''): string {
  return [
    'From: MAILER-DAEMON@mta.example',
    'To: bounces@example.com',
    'Subject: Undelivered Mail Returned to Sender',
    'MIME-Version: 1.0',
    `Content-Type: ${contentType}`,
    ...(extraHeaders ? [extraHeaders] : []),
    '',
    '--b1',
    'Content-Type: text/plain',
    '',
    'Delivery failed.',
    '',
    '--b1',
    'Content-Type: message/delivery-status',
    '',
    status,
    '',
    ...(third ? ['--b1', third] : []),
    '--b1--',
    '',
  ].join('\r\n');
}

test('dsn: Postfix hard bounce, 5.1.1 user unknown, two recipients, returned message/rfc822', async () => {
  const d = dsn(await parseDsn(fixture('dsn-hard-550.eml')));
  assert.equal(d.reportingMta, 'mail.example.com');
  assert.equal(d.originalMessageId, '<msg_0190aaaa0000700080000000000000d4@example.com>');
  assert.deepEqual(d.recipients, [
    {
      finalRecipient: 'nobody@example.org',
      originalRecipient: 'nobody@example.org',
      action: 'failed',
      status: '5.1.1',
      diagnosticCode: '550 5.1.1 <nobody@example.org>: Recipient address rejected: User unknown in virtual mailbox table',
      remoteMta: 'mx1.example.org',
      classification: 'hard',
    },
    {
      finalRecipient: 'gone@example.org',
      originalRecipient: 'gone@example.org',
      action: 'failed',
      status: '5.2.1',
      diagnosticCode: '550 5.2.1 <gone@example.org>: Mailbox disabled for this recipient',
      remoteMta: 'mx1.example.org',
      classification: 'hard',
    },
  ]);
});

test('dsn: Postfix delay warning, 4.4.7 delayed, is soft; headers from text/rfc822-headers', async () => {
  const d = dsn(await parseDsn(fixture('dsn-soft-delayed.eml')));
  assert.equal(d.originalMessageId, '<msg_0190aaaa0000700080000000000000e5@example.com>');
  assert.equal(d.recipients.length, 1);
  const [r] = d.recipients;
  assert.equal(r.finalRecipient, 'slow@example.net');
  assert.equal(r.action, 'delayed');
  assert.equal(r.status, '4.4.7');
  assert.equal(r.diagnosticCode, 'connect to mx.example.net[198.51.100.7]:25: Connection timed out');
  assert.equal(r.remoteMta, null);
  assert.equal(r.classification, 'soft');
});

test('dsn: Exchange Online NDR, 5.1.10 recipient not found, multipart/alternative text first', async () => {
  const d = dsn(await parseDsn(fixture('dsn-exchange.eml')));
  assert.equal(d.reportingMta, 'MW4PR12MB7000.namprd12.prod.outlook.com');
  assert.equal(d.originalMessageId, '<msg_0190aaaa0000700080000000000000f6@example.com>');
  assert.equal(d.recipients.length, 1);
  const [r] = d.recipients;
  assert.equal(r.finalRecipient, 'ghost@contoso.com');
  assert.equal(r.originalRecipient, null);
  assert.equal(r.status, '5.1.10');
  assert.match(r.diagnosticCode ?? '', /^550 5\.1\.10 RESOLVER\.ADR\.RecipientNotFound/);
  assert.equal(r.classification, 'hard');
});

test('dsn: Gmail 5.1.1 with text/rfc822-headers; folded multi-line diagnostic unfolded', async () => {
  const d = dsn(await parseDsn(fixture('dsn-gmail.eml')));
  assert.equal(d.reportingMta, 'googlemail.com');
  assert.equal(d.originalMessageId, '<msg_0190aaaa000070008000000000000107@example.com>');
  const [r] = d.recipients;
  assert.equal(r.finalRecipient, 'no.such.user.42@gmail.com');
  assert.equal(r.status, '5.1.1');
  assert.equal(r.classification, 'hard');
  assert.equal(r.remoteMta, 'gmail-smtp-in.l.google.com', 'comment and trailing dot dropped');
  assert.ok(r.diagnosticCode?.startsWith('550-5.1.1 The email account that you tried to reach does not exist.'));
  assert.ok(!/[\r\n]|\s{2}/.test(r.diagnosticCode ?? ''), 'unfolded, whitespace collapsed');
});

test('dsn: without a returned part the Message-ID comes from X-Original-Message-ID, then In-Reply-To', async () => {
  const rcpt = 'Final-Recipient: rfc822; a@b.example\r\nAction: failed\r\nStatus: 5.1.1';
  const viaField = dsn(await parseDsn(report(`Reporting-MTA: dns; mx.example\r\nX-Original-Message-ID: <msg_x1@example.com>\r\n\r\n${rcpt}`)));
  assert.equal(viaField.originalMessageId, '<msg_x1@example.com>');
  const viaReply = dsn(await parseDsn(report(`Reporting-MTA: dns; mx.example\r\n\r\n${rcpt}`, '', undefined, 'In-Reply-To: <msg_x2@example.com>')));
  assert.equal(viaReply.originalMessageId, '<msg_x2@example.com>');
  const none = dsn(await parseDsn(report(`Reporting-MTA: dns; mx.example\r\n\r\n${rcpt}`)));
  assert.equal(none.originalMessageId, null);
});

test('dsn: a missing per-message group and Status comments are tolerated', async () => {
  const d = dsn(await parseDsn(report('Final-Recipient: RFC822; <A@B.example>\r\nAction: Failed\r\nStatus: 5.0.0 (permanent failure)')));
  assert.equal(d.reportingMta, null);
  assert.deepEqual(
    d.recipients.map((r) => [r.finalRecipient, r.action, r.status, r.classification]),
    [['A@B.example', 'failed', '5.0.0', 'hard']],
  );
});

test('dsn: delivered and relayed recipients are classified delivered', async () => {
  const d = dsn(
    await parseDsn(
      report('Reporting-MTA: dns; mx.example\r\n\r\nFinal-Recipient: rfc822; a@b.example\r\nAction: delivered\r\nStatus: 2.0.0\r\n\r\nFinal-Recipient: rfc822; c@d.example\r\nAction: relayed\r\nStatus: 2.0.0'),
    ),
  );
  assert.deepEqual(d.recipients.map((r) => r.classification), ['delivered', 'delivered']);
});

test('classifyDsnRecipient: failed+5 hard, 4.x.x or delayed soft, 2.x.x delivered, the rest other', () => {
  assert.equal(classifyDsnRecipient('failed', '5.1.1'), 'hard');
  assert.equal(classifyDsnRecipient('failed', '4.4.7'), 'soft');
  assert.equal(classifyDsnRecipient('delayed', '4.4.1'), 'soft');
  assert.equal(classifyDsnRecipient('delayed', null), 'soft');
  assert.equal(classifyDsnRecipient('delayed', '5.0.0'), 'soft');
  assert.equal(classifyDsnRecipient('delivered', '2.0.0'), 'delivered');
  assert.equal(classifyDsnRecipient('expanded', '2.0.0'), 'delivered');
  assert.equal(classifyDsnRecipient('failed', null), 'other');
  assert.equal(classifyDsnRecipient(null, '5.1.1'), 'other');
  assert.equal(classifyDsnRecipient('weird', '2.0.0'), 'other');
});

test('parseFieldBlocks: unfolds continuation lines, lower-cases names, splits groups on blank lines', () => {
  const blocks = parseFieldBlocks('\r\nReporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822;\r\n  x@y.example\r\nX-Note: one\r\n\ttwo   three\r\n  \r\nAction: failed\r\nnot a field line\r\n');
  assert.deepEqual(blocks, [
    new Map([['reporting-mta', ['dns; a']]]),
    new Map([['final-recipient', ['rfc822; x@y.example']], ['x-note', ['one two three']]]),
    new Map([['action', ['failed']]]),
  ]);
});

test('dsn: an ARF complaint is refused as having no delivery-status part', async () => {
  const result = await parseDsn(fixture('arf-rfc822.eml'));
  assert.ok(!result.ok);
  assert.equal(result.reason, 'no_delivery_status');
});

test('dsn: a message that is not a multipart/report is refused', async () => {
  const result = await parseDsn(fixture('arf-broken.eml'));
  assert.ok(!result.ok);
  assert.equal(result.reason, 'not_multipart_report');
});

test('dsn: a delivery-status part naming no recipient is refused', async () => {
  const result = await parseDsn(report('Reporting-MTA: dns; mx.example\r\nArrival-Date: Tue, 12 Nov 2024 10:15:30 +0000'));
  assert.ok(!result.ok);
  assert.equal(result.reason, 'no_recipients');
});

test('dsn: garbage input is a refusal, not an exception', async () => {
  for (const raw of ['', 'hello', Buffer.from([0, 255, 10, 13])]) assert.equal((await parseDsn(raw)).ok, false);
});
