import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyBounce, findEnhancedStatus, findReplyCode } from '../../../src/mail/bounces/verdict.js';
import { classifySmtpReply } from '../../../src/mail/classify.js';
import { BOUNCE_REASONS, sideOf, type BounceReason } from '../../../src/mail/bounces/reasons.js';

/**
 * Replies and bounce diagnostics as providers word them, each with the reason it must get
 * and whether it shows the address dead. The same function serves the SMTP-reply path of the
 * delivery engine and the bounce-mail path (the last tests check both give the same answer).
 */
const rows: [string, BounceReason, boolean][] = [
  // dead
  ['550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient\'s email address for typos - gsmtp', 'user_unknown', true],
  ['550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown in local recipient table', 'user_unknown', true],
  ['550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup', 'user_unknown', true],
  ['550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [DB5EUR03FT012.eop-EUR03.prod.protection.outlook.com]', 'user_unknown', true],
  ['554 delivery error: dd This user doesn\'t have a yahoo.com account (someone@yahoo.com) [0] - mta1234.mail.ne1.yahoo.com', 'user_unknown', true],
  ['550 5.5.0 Requested action not taken: mailbox unavailable.', 'user_unknown', true],
  ['550 Requested action not taken: mailbox unavailable', 'user_unknown', true],
  ['Sorry, no mailbox here by that name. (#5.1.1)', 'user_unknown', true],
  ['550 5.1.1 <x@icloud.com>: user does not exist', 'user_unknown', true],
  ['550 Message was not accepted -- invalid mailbox.  Local mailbox x@mail.ru is unavailable: user not found', 'user_unknown', true],
  ['550 5.7.1 No such user(x@yandex.ru)', 'user_unknown', true],
  ['550 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550', 'user_unknown', true],
  ['User kijitora (kijitora@example.jp) not listed in Domino Directory', 'user_unknown', true],
  ['550 5.1.1 Unknown address error 550-"Adresse d au moins un destinataire invalide. Invalid recipient. OFR_416"', 'user_unknown', true],
  ['552 5.1.1 <x@gmx.de>: Recipient address rejected: Mailbox not found', 'user_unknown', true],
  ['550 5.1.2 Host unknown (Name server: mx.nowhere.example: host not found)', 'host_unknown', true],
  ['Unrouteable address', 'host_unknown', true],
  ['DNS Error: Address resolution of typo.example. failed: Domain name not found', 'host_unknown', true],
  ['550 5.1.2 <x@y.example>: Recipient address rejected: Domain not found', 'host_unknown', true],
  ['551 User not local; please try <new@example.net>', 'has_moved', true],
  ['550 5.1.6 Recipient addresses in this domain no longer accept mail; user has moved', 'has_moved', true],
  ['556 5.1.10 Recipient address rejected: Domain example.org does not accept mail (nullMX)', 'not_accept', true],
  // recipient side: not dead
  ['452 4.2.2 The email account that you tried to reach is over quota. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaTemp - gsmtp', 'mailbox_full', false],
  ['552 5.2.2 <x@icloud.com>: user is over quota', 'mailbox_full', false],
  ['554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException.MapiExceptionShutoffQuotaExceeded', 'mailbox_full', false],
  ['552 5.2.2 Mailbox size limit exceeded', 'mailbox_full', false],
  ['550 5.2.1 The email account that you tried to reach is disabled. - gsmtp', 'suspended', false],
  ['554 delivery error: dd Sorry your message to x@yahoo.com cannot be delivered. This account has been disabled or discontinued [#102]. - mta', 'suspended', false],
  ['550 5.2.1 <x@example.cz>: Mailbox disabled, not accepting messages', 'not_accept', true],
  ['552 5.3.4 Message size exceeds fixed maximum message size', 'mesg_too_big', false],
  ['552 5.2.3 Message exceeds maximum size for this recipient', 'mesg_too_big', false],
  ['452 4.5.3 Too many recipients', 'exceed_limit', false],
  ['452 4.3.1 Insufficient system storage', 'system_full', false],
  ['421 4.7.0 Too many concurrent SMTP connections from this IP address; please try again later', 'too_many_conn', false],
  ['450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered', 'rate_limited', false],
  ['451 4.7.1 Greylisted, please try again in 300 seconds', 'rate_limited', false],
  ['421 4.4.2 Connection timed out', 'network_error', false],
  ['retry timeout exceeded', 'expired', false],
  ['554 5.4.6 Hop count exceeded - possible mail loop', 'system_error', false],
  ['451 4.3.0 Mail server temporarily rejected message', 'system_error', false],
  // sender side: never dead, whatever the code says
  ['550-5.7.26 This mail has been blocked because the sender is unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM.', 'auth_failure', false],
  ['550 5.7.1 Unauthenticated email from example.com is not accepted due to domain\'s DMARC policy', 'auth_failure', false],
  ['550 5.7.509 Access denied, sending domain example.com does not pass DMARC verification and has a DMARC policy of reject.', 'auth_failure', false],
  ['550 5.7.23 SPF validation failed', 'auth_failure', false],
  ['554 5.7.1 Service unavailable; Client host [203.0.113.5] blocked using zen.spamhaus.org', 'blocked', false],
  ['550 5.7.1 [203.0.113.5] Our system has detected an unusual rate of unsolicited mail originating from your IP address.', 'blocked', false],
  ['550 SC-001 (BAY004-MC1F15) Unfortunately, messages from 203.0.113.5 weren\'t sent. Please contact your Internet service provider since part of their network is on our block list.', 'blocked', false],
  ['550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP.', 'blocked', false],
  ['553 5.7.1 [BL21] Connections will not be accepted from 203.0.113.5, because the ip is in Spamhaus\'s list', 'blocked', false],
  ['421 4.7.0 [TSS04] Messages from 203.0.113.5 temporarily deferred due to unexpected volume or user complaints', 'blocked', false],
  ['550 5.1.1 <x@example.org>: blocked using bl.spamcop.net', 'blocked', false],
  ['550 5.7.25 The IP address sending this message does not have a PTR record setup', 'blocked', false],
  ['554 5.7.1 Message rejected as spam by Content Filtering', 'spam_detected', false],
  ['550 5.7.1 Our system has detected that this message is likely unsolicited mail. To reduce the amount of spam sent to Gmail, this message has been blocked.', 'spam_detected', false],
  ['554 5.7.1 <x@example.org>: Relay access denied', 'no_relaying', false],
  ['550 5.7.1 Unable to relay for x@example.org', 'no_relaying', false],
  ['553 sorry, that domain isn\'t in my list of allowed rcpthosts (#5.7.1)', 'no_relaying', false],
  ['553 5.1.8 <bounces@example.com>: Sender address rejected: Domain not found', 'rejected', false],
  ['550 5.1.0 <bounces@example.com>: Sender address rejected: undeliverable address', 'rejected', false],
  ['553 5.6.7 SMTPUTF8 is required, but was not offered by the client', 'rejected', false],
  ['550-Requested action not taken: mailbox unavailable 550 invalid DNS MX or A/AAAA resource record', 'rejected', false],
  ['530 5.7.0 Must issue a STARTTLS command first', 'security_error', false],
  ['550 5.7.1 RESOLVER.RST.AuthRequired; authentication required', 'security_error', false],
  ['554 5.7.0 Virus found in message', 'security_error', false],
  ['550 Rejected by header based Anti-Spoofing policy: hello@example.com', 'policy_violation', false],
  ['550 Administrative prohibition', 'policy_violation', false],
  ['554 5.6.0 Message contains invalid header', 'content_error', false],
  ['552 5.7.0 This message was blocked because its content presents a potential security issue. Please visit https://support.google.com/mail/?p=BlockedMessage', 'security_error', false],
  ['550 5.7.1 Recipient address rejected: the recipient has a filter that rejects your message', 'filtered', false],
  ['501 5.5.4 Syntax error in parameters or arguments', 'syntax_error', false],
  // The kinds of disagreement measured on real bounces: refusals of the message or of us read
  // as dead addresses, and dead addresses worded in ways the tables did not know.
  ['550 Mail refused: this recipient does not accept mail from your address', 'filtered', false],
  ['550 5.7.1 The user or domain that you are sending to (or from) has a policy that prohibited the mail that you sent', 'policy_violation', false],
  ['554 5.7.1 <rcpt@example.org>: Recipient address rejected: Access denied', 'policy_violation', false],
  ['550 5.4.1 [rcpt@example.org]: Recipient address rejected: Access denied', 'user_unknown', true],
  ['550 5.7.606 Access denied, banned sending IP [203.0.113.5]', 'blocked', false],
  ['550 5.1.0 <bounces@example.com>: Sender address rejected: User unknown in local recipient table', 'rejected', false],
  ['550 5.7.1 Client host rejected: cannot find your hostname, [203.0.113.5]', 'blocked', false],
  ['550 5.0.0 <rcpt@example.org>... Relaying denied. IP name lookup failed [203.0.113.5]', 'no_relaying', false],
  ['421 4.7.0 [GL01] Message from (203.0.113.5) temporarily deferred', 'blocked', false],
  ['553 sorry, your envelope sender has been denied (#5.7.1)', 'rejected', false],
  ['delivery temporarily suspended: connect to mx.example.org[192.0.2.10]:25: Connection timed out', 'network_error', false],
  ['Message could not be delivered for 5 days', 'expired', false],
  ['#550 4.4.7 QUEUE.Expired; message expired ##', 'expired', false],
  ['retry time not reached for any host after a long failure period', 'expired', false],
  ['550 5.2.1 This mailbox has been blocked due to inactivity', 'suspended', false],
  ['550 5.2.1 <rcpt@example.org>: mailbox is inactive', 'suspended', false],
  ['550 5.7.1 This account has been suspended', 'suspended', false],
  ['552 5.2.2 Quota exceeded (mailbox for user is full)', 'mailbox_full', false],
  ['X-Unix; 1', 'mailer_error', false],
  ['550 5.7.1 Email rejected per SPF policy', 'auth_failure', false],
  ['554 5.7.5 Permanent error evaluating DMARC policy', 'auth_failure', false],
  ['550 5.7.0 TLS required for this domain', 'security_error', false],
  ['554 5.6.0 Message rejected due to content restrictions', 'content_error', false],
  ['lost connection with mx.example.org[192.0.2.10] while receiving the initial server greeting', 'network_error', false],
  ['550 Unknown user rcpt@docomo.example.jp', 'user_unknown', true],
  ['Unable to deliver to <rcpt@example.org>: no such local user', 'user_unknown', true],
  ['550 sorry, no mailbox here by that name. (#5.7.17)', 'user_unknown', true],
  ['Sorry, no mailbox here by that name. vpopmail (#5.1.1)', 'user_unknown', true],
  ['550 5.1.1 Invalid recipient: <rcpt@example.org>', 'user_unknown', true],
  ['all relevant MX records point to non-existent hosts', 'host_unknown', true],
  ['an MX or SRV record indicated no SMTP service', 'not_accept', true],
  ['553 5.1.10 <rcpt@example.org>... Domain of address rcpt@example.org does not accept mail', 'not_accept', true],
  ['550 5.1.2 rcpt@example.org... Host unknown (Name server: example.org: host not found)', 'host_unknown', true],
  ['Host or domain name not found. Name service error for name=example.org type=A: Host not found', 'host_unknown', true],
  ['550 Message was not accepted -- invalid mailbox.  Local mailbox rcpt@example.org is unavailable: account is disabled', 'suspended', false],
  ['554 5.7.1 <rcpt@example.org>: Recipient address rejected: Mail appeared to be SPAM or forged. Ask your Mail/DNS-Administrator to correct HELO and DNS MX settings or to get removed from DNSBLs', 'spam_detected', false],
  ['550 5.7.350 Remote server returned message detected as spam', 'spam_detected', false],
  ['550 5.7.133 RESOLVER.RST.SenderNotAuthenticatedForGroup; authentication required', 'filtered', false],
  ['550 5.7.1 Mail from this sender is blocked by the recipient', 'filtered', false],
  ['550 5.1.1 <rcpt@example.org>: Recipient address rejected: Rejected by recipient rules', 'filtered', false],
  ['550 #5.1.0 Address rejected.', 'user_unknown', true],
  ['550 5.0.0 Recipient rejected: mailbox closed', 'user_unknown', true],
  // undecided
  ['554 5.0.0 Service unavailable', 'system_error', false],
  ['550 5.0.0 failed', 'undefined', false],
];

for (const [diagnostic, reason, dead] of rows) {
  test(`classify: ${diagnostic.slice(0, 90)} → ${reason}${dead ? ' (dead)' : ''}`, () => {
    const v = classifyBounce({ diagnostic, action: diagnostic.match(/^4|#4\./) ? 'delayed' : 'failed' });
    assert.equal(v.reason, reason);
    assert.equal(v.dead, dead);
    assert.equal(v.side, sideOf(reason));
  });
}

test('classify: the SMTP-reply path gives the same verdict as the bounce-mail path', () => {
  for (const [diagnostic] of rows) {
    const code = findReplyCode(diagnostic);
    if (code === null || code < 500) continue;
    const reply = classifySmtpReply(code, diagnostic, 'mx.example.org');
    assert.ok(reply.kind === 'hard_bounce', diagnostic);
    const mail = classifyBounce({ reply: code, status: findEnhancedStatus(diagnostic), diagnostic, action: 'failed' });
    assert.deepEqual([reply.verdict.reason, reply.verdict.dead], [mail.reason, mail.dead], diagnostic);
    assert.equal(reply.ourFault, mail.side === 'sender', diagnostic);
  }
});

test('classify: a dead reason on a 4xx reply or a 4.x.x status is not dead (temporary)', () => {
  const v = classifyBounce({ diagnostic: '450 4.1.1 <x@example.org>: Recipient address rejected: User unknown in local recipient table' });
  assert.equal(v.reason, 'user_unknown');
  assert.equal(v.permanent, false);
  assert.equal(v.dead, false);
  assert.equal(classifyBounce({ status: '4.1.1', action: 'failed' }).dead, false);
});

test('classify: without words, the enhanced status decides; x.0.0 falls back to the reply code', () => {
  assert.deepEqual([classifyBounce({ status: '5.1.1' }).reason, classifyBounce({ status: '5.1.1' }).dead], ['user_unknown', true]);
  assert.equal(classifyBounce({ status: '5.2.2' }).reason, 'mailbox_full');
  assert.equal(classifyBounce({ status: '5.7.26' }).reason, 'auth_failure');
  assert.equal(classifyBounce({ status: '5.0.0', reply: 552 }).reason, 'mailbox_full');
  assert.equal(classifyBounce({ status: '5.0.0' }).reason, 'undefined');
  assert.equal(classifyBounce({}).reason, 'undefined');
});

test('classify: addresses and host names in the text decide nothing (relay.example.net, spam@…)', () => {
  assert.equal(classifyBounce({ diagnostic: 'host relay.example.net said: 550 5.1.1 <spam@example.net>: User unknown' }).reason, 'user_unknown');
  assert.equal(classifyBounce({ diagnostic: '550 5.1.1 <blocked-list@example.net>... no such user' }).reason, 'user_unknown');
});

test('reasons: the taxonomy is the issue\'s, each reason on one side', () => {
  assert.equal(BOUNCE_REASONS.length, 26);
  assert.deepEqual(BOUNCE_REASONS.filter((r) => sideOf(r) === 'dead'), ['user_unknown', 'host_unknown', 'has_moved', 'not_accept']);
  assert.equal(sideOf('undefined'), 'unknown');
});

test('findReplyCode / findEnhancedStatus: read codes in the usual spots, not dates or addresses', () => {
  assert.equal(findReplyCode('550-5.7.26 blocked'), 550);
  assert.equal(findReplyCode('host mx [192.0.2.1]: 452 4.2.2 full'), 452);
  assert.equal(findReplyCode('Mon, 18 Nov 2024 10:15:02 +0900'), null);
  assert.equal(findEnhancedStatus('Sorry, no mailbox here by that name. (#5.1.1)'), '5.1.1');
  assert.equal(findEnhancedStatus('from 203.0.113.5 at 10.0.0.1'), null);
  assert.equal(findEnhancedStatus('smtp;550 5.1.10 RESOLVER'), '5.1.10');
});
