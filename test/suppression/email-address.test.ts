import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emailKey, parseEmailAddress } from '../../src/domain/email-address.js';

test('email address: valid addresses keep their spelling; the key lower-cases local part and domain', () => {
  const r = parseEmailAddress('  Jane.Doe+news@Example.COM ');
  assert.ok(r.ok);
  assert.deepEqual(r.value, { address: 'Jane.Doe+news@Example.COM', local: 'Jane.Doe+news', domain: 'Example.COM', key: 'jane.doe+news@example.com' });
});

test('email address: an internationalised domain is matched in its ASCII form; a UTF-8 local part is accepted', () => {
  assert.equal(emailKey('Jörg@Exämple.de'), 'jörg@xn--exmple-cua.de');
  assert.equal(emailKey('jörg@XN--EXMPLE-CUA.DE'), 'jörg@xn--exmple-cua.de');
});

test('email address: quoted local parts parse, and "a"@x matches a@x', () => {
  assert.equal(emailKey('"A"@example.com'), 'a@example.com');
  assert.ok(parseEmailAddress('"john smith"@example.com').ok);
});

test('email address: rejects what is not one bare, deliverable address', () => {
  for (const bad of [
    '', '   ', 'plain', 'a@b', '@example.com', 'a@', 'a@@example.com', 'a b@example.com', 'a@exa mple.com',
    'Jane <jane@example.com>', '<jane@example.com>', '(comment)jane@example.com', 'a@example.com, b@example.com',
    'a@-example.com', 'a@example-.com', 'a@exa_mple.com', 'a@example..com', 'a@[127.0.0.1]', 'a@1.2.3.4',
    'x'.repeat(65) + '@example.com', 'a@' + 'b'.repeat(64) + '.com',
  ]) {
    assert.equal(parseEmailAddress(bad).ok, false, JSON.stringify(bad));
  }
});

test('email address: length limits are RFC 5321\'s: local part 64, whole address 254 bytes', () => {
  assert.ok(parseEmailAddress('x'.repeat(64) + '@example.com').ok);
  const domain = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(60)].join('.');
  assert.equal(`x@${domain}`.length, 254);
  assert.ok(parseEmailAddress(`x@${domain}`).ok);
  assert.equal(parseEmailAddress(`xy@${domain}`).ok, false);
});

test('email address: a remembered parse answers exactly as the first one, and cannot be changed by a caller', () => {
  const inputs = [' Jane.Doe+news@Example.COM ', 'Jörg@Exämple.de', '"A"@example.com', 'a@b', 'Jane <jane@example.com>', 'x'.repeat(65) + '@example.com', ''];
  const first = inputs.map((i) => structuredClone(parseEmailAddress(i)));
  assert.deepEqual(inputs.map((i) => parseEmailAddress(i)), first);
  const r = parseEmailAddress('Jane.Doe@Example.COM');
  assert.ok(r.ok);
  assert.throws(() => {
    (r.value as { key: string }).key = 'someone@else.example';
  }, TypeError);
  assert.equal(emailKey('Jane.Doe@Example.COM'), 'jane.doe@example.com');
  // Past the memo's size it starts over; answers stay the same.
  for (let i = 0; i < 10_050; i++) assert.equal(emailKey(`reader${i}@Example.net`), `reader${i}@example.net`);
  assert.deepEqual(parseEmailAddress(inputs[0]), first[0]);
});
