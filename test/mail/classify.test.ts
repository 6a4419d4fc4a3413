import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  classifyMxFailure,
  classifySmtpError,
  classifySmtpReply,
  parseRetryAfterSeconds,
} from '../../src/mail/classify.js';
import { classifyBounce } from '../../src/mail/bounces/verdict.js';
import { DIALECT_TOKENS, PHRASE_FAMILIES } from '../../src/mail/bounces/phrases/index.js';

const MX = 'mx.example.org';

// Replies as real servers send them (wording from Gmail, Outlook, Yahoo, Postfix, Exim).
const replies: {
  name: string;
  code: number;
  response: string;
  kind: 'delivered' | 'deferred' | 'hard_bounce';
  enhanced: string | null;
  ourFault?: boolean;
  retryAfterSeconds?: number;
}[] = [
  { name: 'Gmail accepted', code: 250, response: '250 2.0.0 OK  1732097730 a640c23a62f3a-aa4c1bde2c2si123 - gsmtp', kind: 'delivered', enhanced: '2.0.0' },
  {
    name: 'Gmail 5.7.26 unauthenticated (multi-line)',
    code: 550,
    response: '550-5.7.26 This mail is unauthenticated, which poses a security risk to the sender and Gmail\n550-5.7.26 users, and has been blocked. The sender must authenticate with at least one\n550 5.7.26 of SPF or DKIM. - gsmtp',
    kind: 'hard_bounce', enhanced: '5.7.26', ourFault: true,
  },
  { name: 'user unknown', code: 550, response: "550 5.1.1 The email account that you tried to reach does not exist. - gsmtp", kind: 'hard_bounce', enhanced: '5.1.1', ourFault: false },
  { name: 'Postfix user unknown', code: 550, response: '550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown in local recipient table', kind: 'hard_bounce', enhanced: '5.1.1', ourFault: false },
  { name: 'mailbox full, temporary', code: 452, response: '452 4.2.2 The recipient\'s inbox is out of storage space. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaTemp - gsmtp', kind: 'deferred', enhanced: '4.2.2' },
  { name: '421 with a retry hint', code: 421, response: '421 4.7.0 Too many connections from your IP, try again in 5 minutes', kind: 'deferred', enhanced: '4.7.0', retryAfterSeconds: 300 },
  { name: 'greylisting', code: 451, response: '451 4.7.1 Greylisted, please try again in 300 seconds', kind: 'deferred', enhanced: '4.7.1', retryAfterSeconds: 300 },
  { name: 'Yahoo deferral without a hint', code: 421, response: '421 4.7.0 [TSS04] Messages from 203.0.113.5 temporarily deferred due to unexpected volume or user complaints', kind: 'deferred', enhanced: '4.7.0' },
  { name: 'DMARC reject', code: 550, response: '550 5.7.1 Unauthenticated email from example.com is not accepted due to domain\'s DMARC policy', kind: 'hard_bounce', enhanced: '5.7.1', ourFault: true },
  { name: 'SPF fail', code: 550, response: '550 5.7.1 SPF check failed for 203.0.113.5', kind: 'hard_bounce', enhanced: '5.7.1', ourFault: true },
  { name: 'no reverse DNS', code: 550, response: '550 5.7.25 The IP address sending this message does not have a PTR record setup', kind: 'hard_bounce', enhanced: '5.7.25', ourFault: true },
  { name: 'sender MX/domain', code: 550, response: '550 5.7.27 Sender address has null MX', kind: 'hard_bounce', enhanced: '5.7.27', ourFault: true },
  { name: 'Spamhaus block', code: 554, response: '554 5.7.1 Service unavailable; Client host [203.0.113.5] blocked using zen.spamhaus.org', kind: 'hard_bounce', enhanced: '5.7.1', ourFault: true },
  { name: 'Outlook blocklist without enhanced code', code: 550, response: '550 SC-001 (BAY004-MC1F15) Unfortunately, messages from 203.0.113.5 weren\'t sent. Please contact your Internet service provider since part of their network is on our block list.', kind: 'hard_bounce', enhanced: null, ourFault: true },
  { name: 'message too big', code: 552, response: '552 5.3.4 Message size exceeds fixed limit', kind: 'hard_bounce', enhanced: '5.3.4', ourFault: false },
  { name: 'mailbox disabled', code: 550, response: '550 5.2.1 The email account that you tried to reach is disabled.', kind: 'hard_bounce', enhanced: '5.2.1', ourFault: false },
  { name: '503 bad sequence is not a bounce', code: 503, response: '503 5.5.1 Bad sequence of commands', kind: 'deferred', enhanced: '5.5.1' },
];

for (const r of replies) {
  test(`classify: ${r.name} → ${r.kind}`, () => {
    const result = classifySmtpReply(r.code, r.response, MX);
    assert.equal(result.kind, r.kind);
    assert.equal(result.mx, MX);
    assert.equal(result.response, r.response);
    if (result.kind === 'delivered') return;
    assert.equal(result.code, r.code);
    assert.equal(result.enhanced, r.enhanced);
    if (result.kind === 'hard_bounce') assert.equal(result.ourFault, r.ourFault);
    if (result.kind === 'deferred') assert.equal(result.retryAfterSeconds, r.retryAfterSeconds);
  });
}

test('classify: connection refused (nodemailer ESOCKET/ECONNREFUSED) is deferred as a host failure', () => {
  const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:25'), { code: 'ESOCKET', originalCode: 'ECONNREFUSED', command: 'CONN' });
  const result = classifySmtpError(err, MX);
  assert.equal(result.kind, 'deferred');
  assert.ok(result.kind === 'deferred' && result.hostFailure);
  assert.equal(result.kind === 'deferred' && result.code, null);
  assert.equal(result.kind === 'deferred' && result.enhanced, '4.4.1');
});

test('classify: a timeout and a reset connection are deferred', () => {
  for (const err of [
    Object.assign(new Error('Greeting never received'), { code: 'ETIMEDOUT', command: 'CONN' }),
    Object.assign(new Error('Connection closed unexpectedly'), { code: 'ECONNECTION' }),
    Object.assign(new Error('read ECONNRESET'), { code: 'ESOCKET', originalCode: 'ECONNRESET' }),
  ]) {
    const result = classifySmtpError(err, MX);
    assert.equal(result.kind, 'deferred', err.message);
    assert.equal(result.kind === 'deferred' && result.enhanced, '4.4.2');
  }
});

test('classify: a nodemailer envelope error carries the reply and is classified by it', () => {
  const err = Object.assign(new Error("Can't send mail - all recipients were rejected: 550 5.1.1 User unknown"), {
    code: 'EENVELOPE', response: '550 5.1.1 User unknown', responseCode: 550, command: 'RCPT TO',
  });
  const result = classifySmtpError(err, MX);
  assert.equal(result.kind, 'hard_bounce');
  assert.equal(result.kind === 'hard_bounce' && result.ourFault, false);
});

test('classify: a relay refusing our credentials is deferred, never a bounce', () => {
  const err = Object.assign(new Error('Invalid login: 535 5.7.8 Authentication credentials invalid'), {
    code: 'EAUTH', response: '535 5.7.8 Authentication credentials invalid', responseCode: 535, command: 'AUTH PLAIN',
  });
  assert.equal(classifySmtpError(err, 'relay.example.net').kind, 'deferred');
});

test('classify: a 554 greeting is a bounce that is ours, not the recipient’s', () => {
  const result = classifySmtpReply(554, '554 mx.example.org ESMTP not accepting messages', MX, 'CONN');
  assert.equal(result.kind, 'hard_bounce');
  assert.equal(result.kind === 'hard_bounce' && result.ourFault, true);
});

test('classify: DNS failures: temporary → deferred; NXDOMAIN, no MX, null MX → hard bounce', () => {
  assert.equal(classifyMxFailure({ ok: false, domain: 'x.test', kind: 'temp', message: 'SERVFAIL' }).kind, 'deferred');
  for (const kind of ['nxdomain', 'no_mx', 'null_mx'] as const) {
    const result = classifyMxFailure({ ok: false, domain: 'x.test', kind, message: kind });
    assert.equal(result.kind, 'hard_bounce', kind);
    assert.equal(result.kind === 'hard_bounce' && result.ourFault, false);
  }
});

test('classify: retry hints in the common phrasings', () => {
  assert.equal(parseRetryAfterSeconds('421 4.7.0 try again in 5 minutes'), 300);
  assert.equal(parseRetryAfterSeconds('450 4.2.0 Greylisted for 60 seconds'), 60);
  assert.equal(parseRetryAfterSeconds('451 Please retry in 2 hours'), 7200);
  assert.equal(parseRetryAfterSeconds('421 4.7.28 Rate limited, try again later in 30s'), 30);
  assert.equal(parseRetryAfterSeconds('451 4.3.0 Try again later'), undefined);
  assert.equal(parseRetryAfterSeconds('452 4.5.3 Too many recipients (max 100)'), undefined);
});

test('SMTP replies follow the bounce rules: every 5xx example of the phrase tables gets the same verdict as in a bounce mail', () => {
  const examples = [...PHRASE_FAMILIES.flatMap((f) => f.phrases.map((p) => p.example)), ...DIALECT_TOKENS.map((t) => t.example)];
  let checked = 0;
  for (const example of examples) {
    const m = /^(5\d\d)[ -]/.exec(example);
    if (!m || m[1] === '503') continue;
    const reply = classifySmtpReply(Number(m[1]), example, MX);
    assert.equal(reply.kind, 'hard_bounce', example);
    if (reply.kind !== 'hard_bounce') continue;
    const mail = classifyBounce({ diagnostic: example, action: 'failed' });
    assert.deepEqual([reply.verdict.reason, reply.verdict.dead, reply.ourFault], [mail.reason, mail.dead, mail.ourFault], example);
    checked++;
  }
  assert.ok(checked > 50, `only ${checked} examples had a 5xx reply`);
});

test('SMTP replies: a 5.1.1 that blames us is not dead; a disabled-for-this-sender 5.2.1 is filtered, ourFault', () => {
  const blocked = classifySmtpReply(550, '550 5.1.1 Mail not accepted from your server, contact the postmaster', MX);
  assert.ok(blocked.kind === 'hard_bounce');
  assert.deepEqual([blocked.verdict.reason, blocked.verdict.dead, blocked.ourFault], ['blocked', false, true]);
  const filtered = classifySmtpReply(550, '550 5.2.1 <rcpt@example.org>: Mailbox disabled for this sender', MX);
  assert.ok(filtered.kind === 'hard_bounce');
  assert.deepEqual([filtered.verdict.reason, filtered.verdict.dead, filtered.ourFault], ['filtered', false, true]);
});
