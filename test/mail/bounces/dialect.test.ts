import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyBounce } from '../../../src/mail/bounces/verdict.js';
import { DIALECT_STATUS, HOST_FAMILIES, REPORTER_FINGERPRINTS, diagnosticDialect, hostFamily, reporterFamily } from '../../../src/mail/bounces/dialect.js';
import { classifySmtpReply } from '../../../src/mail/classify.js';

test('dialect: every fingerprint example names its family', () => {
  for (const f of REPORTER_FINGERPRINTS) assert.equal(reporterFamily(f.example), f.family, f.example);
  for (const f of HOST_FAMILIES) assert.equal(hostFamily(f.example), f.family, f.example);
  assert.equal(hostFamily('mx.example.org'), null);
  assert.equal(reporterFamily('Your message could not be delivered.'), null);
});

test('dialect: every dialect status example reads as its reason in that dialect', () => {
  for (const [family, codes] of Object.entries(DIALECT_STATUS)) {
    for (const [status, { reason, example }] of Object.entries(codes!)) {
      assert.equal(classifyBounce({ status, diagnostic: example, action: 'failed', dialect: family as never }).reason, reason, example);
    }
  }
});

test('dialect: the remote MTA speaks for its diagnostic; the reporter only when no remote MTA took part', () => {
  assert.equal(diagnosticDialect('contoso-example.mail.protection.outlook.com', 'postfix'), 'exchange');
  assert.equal(diagnosticDialect('mx.example.org', 'exchange'), null);
  assert.equal(diagnosticDialect(null, 'exchange'), 'exchange');
});

test('dialect: Office 365 5.4.1 with generic words is an unknown recipient there, "no answer from host" elsewhere', () => {
  const reply = '550 5.4.1 [rcpt@contoso.example]: Recipient address rejected';
  const o365 = classifySmtpReply(550, reply, 'contoso-example.mail.protection.outlook.com');
  assert.ok(o365.kind === 'hard_bounce');
  assert.deepEqual([o365.verdict.reason, o365.verdict.dead], ['user_unknown', true]);
  const other = classifySmtpReply(550, reply, 'mx.example.org');
  assert.ok(other.kind === 'hard_bounce');
  assert.deepEqual([other.verdict.reason, other.verdict.dead], ['network_error', false]);
});

test('dialect: an Exchange NDR whose 5.1.10 says no more is an unknown recipient, not a null MX', () => {
  assert.equal(classifyBounce({ status: '5.1.10', action: 'failed', dialect: 'exchange' }).reason, 'user_unknown');
  assert.equal(classifyBounce({ status: '5.1.10', action: 'failed' }).reason, 'not_accept');
});
