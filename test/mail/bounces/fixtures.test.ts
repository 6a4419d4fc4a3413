import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readReturnedMail, type ReturnedMailKind } from '../../../src/mail/bounces/read.js';
import type { BounceReason } from '../../../src/mail/bounces/reasons.js';

/**
 * One fixture per format (test/fixtures/bounces, written after each MTA's published shape;
 * the four dsn-*.eml and the ARF samples one folder up). Each row says what the live intake
 * must make of it: the kind, the returned message's id, and per failed recipient the reason
 * and whether it is dead. ./agreement.test.ts holds every fixture to expected.json.
 */
const bounce = (file: string, id: string | null, ...recipients: [string, BounceReason, boolean][]) => ({ file, kind: 'bounce' as const, id, recipients });
const other = (file: string, kind: ReturnedMailKind) => ({ file, kind, id: undefined, recipients: [] as [string, BounceReason, boolean][] });
const msgId = (n: number) => `<msg_0190aaaa000070008000000000000${n}@example.com>`;

const cases = [
  bounce('bounces/exim-user-unknown.eml', msgId(201), ['rita.fox@shop.example.net', 'user_unknown', true]),
  bounce('bounces/exim-mailbox-full.eml', msgId(202), ['tom.busy@hosting.example.org', 'mailbox_full', false]),
  bounce('bounces/exim-unrouteable.eml', msgId(203), ['ann@no-such-domain.example', 'host_unknown', true]),
  bounce('bounces/exim-delayed.eml', null, ['slow.sam@mail.example.net', 'network_error', false]),
  bounce('bounces/mailru-user-unknown.eml', msgId(205), ['ivan.petrov@corp.example.ru', 'user_unknown', true]),
  bounce('bounces/qmail-two-recipients.eml', msgId(206), ['nobody.here@oldhost.example.org', 'user_unknown', true], ['pat.full@partner.example.com', 'mailbox_full', false]),
  bounce('bounces/qmail-has-moved.eml', msgId(207), ['moved.on@example.net', 'has_moved', true]),
  bounce('bounces/yahoo-failure-notice.eml', msgId(208), ['closed.account@partner.example.org', 'user_unknown', true]),
  bounce('bounces/sendmail-returned-mail.eml', msgId(209), ['kenji@legacy.example.com', 'user_unknown', true]),
  bounce('bounces/gmail-text-user-unknown.eml', msgId(210), ['lost.user@partner.example.jp', 'user_unknown', true]),
  bounce('bounces/gmail-text-dns-error.eml', msgId(211), ['someone@typo-domain.example', 'host_unknown', true]),
  bounce('bounces/gmail-text-delayed.eml', msgId(212), ['waiting.wendy@busy.example.org', 'network_error', false]),
  bounce('bounces/google-groups.eml', msgId(213), ['product-team@googlegroups.com', 'rejected', false]),
  bounce('bounces/dma-mailbox-full.eml', msgId(214), ['mika.full@mail.example.jp', 'mailbox_full', false]),
  bounce('bounces/courier-dsn.eml', msgId(215), ['nobody@courier.example.net', 'user_unknown', true]),
  bounce('bounces/domino-user-unknown.eml', msgId(216), ['taro@notes.example.co.jp', 'user_unknown', true]),
  bounce('bounces/exchange2003-ndr.eml', msgId(217), ['former.employee@corp.example.com', 'user_unknown', true]),
  // HTML only; the failed mailbox is called "nobody", a name the reader must not take for a daemon.
  bounce('bounces/exchange2007-html.eml', null, ['nobody@contoso-mail.example', 'user_unknown', true]),
  // The report names the recipient by display name only: the returned original's To says who.
  bounce('bounces/exchange2003-display-name.eml', '<abc@example.com>', ['jane.smith@fabrikam-corp.example', 'user_unknown', true]),
  bounce('bounces/exchange2010-text.eml', msgId(218), ['quota.queen@corp.example.org', 'mailbox_full', false]),
  bounce('bounces/postfix-dsn-spam.eml', msgId(219), ['lena@receiver.example.net', 'spam_detected', false]),
  bounce('bounces/postfix-dsn-mailbox-full.eml', msgId(220), ['max.quota@receiver.example.net', 'mailbox_full', false]),
  bounce('bounces/postfix-dsn-null-mx.eml', msgId(221), ['info@parked.example.org', 'not_accept', true]),
  bounce('bounces/office365-blocked.eml', msgId(222), ['buyer@fabrikam.example', 'blocked', false]),
  bounce('bounces/amazonses-dsn.eml', msgId(223), ['no.reader@customer.example.com', 'user_unknown', true]),
  bounce('bounces/mimecast-policy.eml', msgId(224), ['cfo@bank.example.co.uk', 'policy_violation', false]),
  bounce('bounces/yandex-dsn.eml', msgId(225), ['olga@client.example.ru', 'user_unknown', true]),
  bounce('bounces/icloud-over-quota.eml', msgId(226), ['full.inbox@icloud.example', 'mailbox_full', false]),
  bounce('bounces/barracuda-blocked.eml', msgId(227), ['buyer@retail.example.com', 'blocked', false]),
  bounce('bounces/gmail-dsn-auth.eml', msgId(228), ['reader@gmail.com', 'auth_failure', false]),
  bounce('bounces/opensmtpd-mixed.eml', msgId(229), ['erik@nordic.example.se', 'user_unknown', true]),
  bounce('bounces/dsn-broken-boundary.eml', msgId(230), ['gone.girl@webmail.example.net', 'user_unknown', true]),
  bounce('bounces/dsn-no-final-recipient.eml', msgId(231), ['missing.mona@vendor-client.example.com', 'user_unknown', true]),
  bounce('bounces/zoho-invalid.eml', msgId(232), ['priya@startup.example.in', 'user_unknown', true]),
  bounce('bounces/outlookcom-text.eml', msgId(233), ['nemo@hotmail.example', 'user_unknown', true]),
  bounce('bounces/gmx-text.eml', msgId(234), ['klaus.weg@web.example', 'rejected', false]),
  bounce('bounces/orange-text.eml', msgId(235), ['marie.absente@orange.example', 'user_unknown', true]),
  bounce('bounces/groupwise-undeliverable.eml', msgId(236), ['clerk.retired@county.example.gov', 'user_unknown', true]),
  bounce('bounces/mdaemon-permanent.eml', msgId(237), ['sato@client.example.jp', 'user_unknown', true]),
  bounce('bounces/kerio-undelivered.eml', msgId(238), ['jana@agency.example.cz', 'not_accept', true]),
  bounce('bounces/messagelabs-failed.eml', msgId(239), ['head.office@enterprise.example.com', 'user_unknown', true]),
  bounce('dsn-hard-550.eml', '<msg_0190aaaa0000700080000000000000d4@example.com>', ['nobody@example.org', 'user_unknown', true], ['gone@example.org', 'suspended', false]),
  bounce('dsn-soft-delayed.eml', '<msg_0190aaaa0000700080000000000000e5@example.com>', ['slow@example.net', 'network_error', false]),
  bounce('dsn-gmail.eml', '<msg_0190aaaa000070008000000000000107@example.com>', ['no.such.user.42@gmail.com', 'user_unknown', true]),
  bounce('dsn-exchange.eml', '<msg_0190aaaa0000700080000000000000f6@example.com>', ['ghost@contoso.com', 'user_unknown', true]),
  other('bounces/autoreply-out-of-office.eml', 'auto_reply'),
  other('bounces/autoreply-vacation.eml', 'auto_reply'),
  other('bounces/autoreply-left-company.eml', 'auto_reply'),
  other('bounces/autoreply-ticket.eml', 'auto_reply'),
  other('bounces/delivered-dsn.eml', 'delivered'),
  other('bounces/delivered-exchange-text.eml', 'delivered'),
  other('bounces/mdn-read.eml', 'delivered'),
  other('bounces/arf-text-plain.eml', 'complaint'),
  other('arf-rfc822.eml', 'complaint'),
  other('arf-headers-only.eml', 'complaint'),
  other('arf-rfc5965-example.eml', 'complaint'),
];

const raw = (file: string) => readFileSync(new URL(`../../fixtures/${file}`, import.meta.url));

for (const c of cases) {
  test(`fixture ${c.file}: ${c.kind}${c.recipients.map(([e, r, d]) => ` ${e} ${r}${d ? ' dead' : ''}`).join(',')}`, async () => {
    const read = await readReturnedMail(raw(c.file));
    assert.equal(read.kind, c.kind);
    const failed = read.recipients.filter((r) => r.action === 'failed' || r.action === 'delayed');
    assert.deepEqual(failed.map((r) => [r.email, r.reason, r.dead]), c.recipients);
    if (c.id !== undefined) assert.equal(read.originalMessageId, c.id);
  });
}

test('reader: a leading mbox "From " line is ignored', async () => {
  const withLine = Buffer.concat([Buffer.from('From MAILER-DAEMON Mon Nov 18 09:12:44 2024\n'), raw('bounces/exim-user-unknown.eml')]);
  const read = await readReturnedMail(withLine);
  assert.equal(read.kind, 'bounce');
  assert.deepEqual(read.recipients.map((r) => [r.email, r.status, r.reply, r.reason, r.dead, r.remoteMta]), [
    ['rita.fox@shop.example.net', '5.1.1', 550, 'user_unknown', true, 'mail.shop.example.net'],
  ]);
});

test('reader: a DSN recipient carries action, status, reply, diagnostic and remote MTA; the report its reporting MTA', async () => {
  const read = await readReturnedMail(raw('bounces/postfix-dsn-spam.eml'));
  assert.equal(read.format, 'rfc3464');
  assert.equal(read.reportingMta, 'mx.example.com');
  const [r] = read.recipients;
  assert.deepEqual(
    { action: r.action, status: r.status, reply: r.reply, diagnostic: r.diagnostic, remoteMta: r.remoteMta, side: r.side, permanent: r.permanent },
    { action: 'failed', status: '5.7.1', reply: 554, diagnostic: '554 5.7.1 Message rejected as spam by Content Filtering', remoteMta: 'mx.receiver.example.net', side: 'sender', permanent: true },
  );
});

test('reader: delivery-status fields behind a broken MIME boundary are still read', async () => {
  const read = await readReturnedMail(raw('bounces/dsn-broken-boundary.eml'));
  assert.equal(read.format, 'rfc3464-text');
  assert.equal(read.recipients[0].remoteMta, 'mx.webmail.example.net');
});

test('reader: a delivery-status part without Final-Recipient takes the address the text names', async () => {
  const read = await readReturnedMail(raw('bounces/dsn-no-final-recipient.eml'));
  assert.deepEqual(read.recipients.map((r) => [r.email, r.status, r.diagnostic]), [['missing.mona@vendor-client.example.com', '5.1.1', '550 5.1.1 No such user']]);
});

test('reader: a delay warning is a bounce with action delayed, never dead', async () => {
  for (const file of ['bounces/exim-delayed.eml', 'bounces/gmail-text-delayed.eml', 'dsn-soft-delayed.eml']) {
    const [r] = (await readReturnedMail(raw(file))).recipients;
    assert.equal(r.action, 'delayed', file);
    assert.equal(r.permanent, false, file);
    assert.equal(r.dead, false, file);
  }
});
