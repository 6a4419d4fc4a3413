import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readReturnedMail } from '../../../src/mail/bounces/read.js';
import { parseFieldBlocks } from '../../../src/mail/dsn.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}`, import.meta.url));

/** A minimal DSN around the given delivery-status body and optional third part. */
function report(status: string, third = '', contentType = 'multipart/report; report-type=delivery-status; boundary="b1"', extraHeaders = ''): string {
  return [
    'From: MAILER-DAEMON@mta.example', 'To: bounces@example.com', 'Subject: Undelivered Mail Returned to Sender', 'MIME-Version: 1.0',
    `Content-Type: ${contentType}`, ...(extraHeaders ? [extraHeaders] : []), '',
    '--b1', 'Content-Type: text/plain', '', 'Delivery failed.', '',
    '--b1', 'Content-Type: message/delivery-status', '', status, '',
    ...(third ? ['--b1', third] : []), '--b1--', '',
  ].join('\r\n');
}

test('rfc3464: Gmail DSN: address, status, remote MTA without comment and trailing dot, unfolded diagnostic', async () => {
  const read = await readReturnedMail(fixture('dsn-gmail.eml'));
  assert.equal(read.format, 'rfc3464');
  const [r] = read.recipients;
  assert.equal(r.email, 'no.such.user.42@gmail.com');
  assert.equal(r.status, '5.1.1');
  assert.equal(r.remoteMta, 'gmail-smtp-in.l.google.com');
  assert.ok(r.diagnostic?.startsWith('550-5.1.1 The email account that you tried to reach does not exist.'));
  assert.ok(!/[\r\n]|\s{2}/.test(r.diagnostic ?? ''), 'unfolded, whitespace collapsed');
});

test('rfc3464: without a returned part the Message-ID comes from X-Original-Message-ID, then In-Reply-To', async () => {
  const rcpt = 'Final-Recipient: rfc822; a@b.example\r\nAction: failed\r\nStatus: 5.1.1';
  assert.equal((await readReturnedMail(report(`Reporting-MTA: dns; mx.example\r\nX-Original-Message-ID: <msg_x1@example.com>\r\n\r\n${rcpt}`))).originalMessageId, '<msg_x1@example.com>');
  assert.equal((await readReturnedMail(report(`Reporting-MTA: dns; mx.example\r\n\r\n${rcpt}`, '', undefined, 'In-Reply-To: <msg_x2@example.com>'))).originalMessageId, '<msg_x2@example.com>');
  assert.equal((await readReturnedMail(report(`Reporting-MTA: dns; mx.example\r\n\r\n${rcpt}`))).originalMessageId, null);
});

test('rfc3464: a missing per-message group and Status comments are tolerated; 5.0.0 without words is undefined, not dead', async () => {
  const read = await readReturnedMail(report('Final-Recipient: RFC822; <A@B.example>\r\nAction: Failed\r\nStatus: 5.0.0 (permanent failure)'));
  assert.equal(read.reportingMta, null);
  assert.deepEqual(read.recipients.map((r) => [r.email, r.action, r.status, r.reason, r.dead]), [['A@B.example', 'failed', '5.0.0', 'undefined', false]]);
});

test('rfc3464: only delivered and relayed recipients → a delivered notice, not a bounce', async () => {
  const read = await readReturnedMail(report('Reporting-MTA: dns; mx.example\r\n\r\nFinal-Recipient: rfc822; a@b.example\r\nAction: delivered\r\nStatus: 2.0.0\r\n\r\nFinal-Recipient: rfc822; c@d.example\r\nAction: relayed\r\nStatus: 2.0.0'));
  assert.equal(read.kind, 'delivered');
});

test('rfc3464: the returned message/rfc822 gives the original Message-ID', async () => {
  const third = 'Content-Type: message/rfc822\r\n\r\nFrom: a@example.com\r\nMessage-ID: <msg_x3@example.com>\r\n\r\nbody';
  const read = await readReturnedMail(report('Final-Recipient: rfc822; a@b.example\r\nAction: failed\r\nStatus: 5.1.1', third));
  assert.equal(read.originalMessageId, '<msg_x3@example.com>');
});

test('rfc3464: an ARF complaint is a complaint, never a bounce', async () => {
  assert.equal((await readReturnedMail(fixture('arf-rfc822.eml'))).kind, 'complaint');
});

test('rfc3464: a delivery-status part naming no recipient and no failure is not a bounce', async () => {
  const read = await readReturnedMail(report('Reporting-MTA: dns; mx.example\r\nArrival-Date: Tue, 12 Nov 2024 10:15:30 +0000').replace('Subject: Undelivered Mail Returned to Sender', 'Subject: Report'));
  assert.deepEqual(read.recipients, []);
});

test('parseFieldBlocks: unfolds continuation lines, lower-cases names, splits groups on blank lines', () => {
  const blocks = parseFieldBlocks('\r\nReporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822;\r\n  x@y.example\r\nX-Note: one\r\n\ttwo   three\r\n  \r\nAction: failed\r\nnot a field line\r\n');
  assert.deepEqual(blocks, [
    new Map([['reporting-mta', ['dns; a']]]),
    new Map([['final-recipient', ['rfc822; x@y.example']], ['x-note', ['one two three']]]),
    new Map([['action', ['failed']]]),
  ]);
});

test('rfc3464: garbage input is read as unknown, not an exception', async () => {
  for (const raw of ['', 'hello', Buffer.from([0, 255, 10, 13])]) assert.equal((await readReturnedMail(raw)).kind, 'unknown');
});
