import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyBounce, readWording } from '../../../src/mail/bounces/verdict.js';
import { DIALECT_TOKENS, PHRASE_FAMILIES } from '../../../src/mail/bounces/phrases/index.js';
import { sideOf } from '../../../src/mail/bounces/reasons.js';

/**
 * The phrase tables are data with their examples: every example must match its own pattern
 * and come out as its family's reason once the whole table (order included) has had its say.
 */
for (const family of PHRASE_FAMILIES) {
  test(`phrases ${family.reason}: each entry's example gives ${family.reason}`, () => {
    for (const phrase of family.phrases) {
      assert.match(phrase.example, phrase.re, `${family.reason}: the example does not match its own pattern`);
      const wording = readWording(phrase.example);
      assert.equal(wording?.reason, family.reason, phrase.example);
      assert.equal(wording?.weak ?? false, phrase.weak ?? false, phrase.example);
    }
  });
}

test('phrases: every dialect token example gives its reason, whatever status it carries', () => {
  for (const token of DIALECT_TOKENS) {
    assert.match(token.example, token.re);
    assert.equal(classifyBounce({ diagnostic: token.example, action: 'failed' }).reason, token.reason, `${token.mta}: ${token.example}`);
  }
});

test('phrases: a generic 5.0.0 / 5.1.1 whose words blame the sender is never user_unknown', () => {
  for (const diagnostic of [
    '550 5.1.1 <rcpt@example.org>: Recipient address rejected: blocked by policy',
    '550 5.0.0 Message rejected as spam',
    '550 5.1.1 Your IP has a poor reputation, rejected',
    '550 5.1.1 Mail not accepted from your server',
    '550 5.1.1 Sender denied',
    '550 5.1.1 Unauthenticated email is not accepted due to DMARC policy',
    '550 5.0.0 <rcpt@example.org>: message filtered',
  ]) {
    const v = classifyBounce({ diagnostic, action: 'failed' });
    assert.equal(v.side, 'sender', `${diagnostic} → ${v.reason}`);
    assert.equal(v.dead, false, diagnostic);
    assert.equal(v.ourFault, true, diagnostic);
  }
});

test('phrases: generic wording loses to a specific status, decides without one', () => {
  assert.equal(classifyBounce({ diagnostic: '550 5.7.1 Requested action not taken: mailbox unavailable' }).reason, 'policy_violation');
  assert.equal(classifyBounce({ diagnostic: '550 5.2.2 <rcpt@example.org>: Recipient address rejected' }).reason, 'mailbox_full');
  const bare = classifyBounce({ diagnostic: '550 Requested action not taken: mailbox unavailable' });
  assert.deepEqual([bare.reason, bare.dead], ['user_unknown', true]);
  const zero = classifyBounce({ diagnostic: '550 5.0.0 <rcpt@example.org>: Recipient address rejected' });
  assert.deepEqual([zero.reason, zero.dead], ['user_unknown', true]);
});

test('phrases: a remote queue that gave up (x.4.7) is expired, never dead, whatever its last error said', () => {
  const v = classifyBounce({ status: '5.4.7', diagnostic: 'delivery attempts gave up: last error 450 4.1.1 user unknown', action: 'failed' });
  assert.equal(v.reason, 'expired');
  assert.equal(v.dead, false);
  assert.equal(sideOf(v.reason), 'recipient');
});
