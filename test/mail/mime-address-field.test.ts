import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressField, headerField, type HeaderValue } from '../../src/mail/mime/header-fields.js';
import { seededRandom } from '../helpers/dkim-corpus.js';

// A per-recipient To of one plain address is written without nodemailer's address parser
// (docs/decisions/0050-build-step-from-written-strings.md): addressField must answer what
// headerField answers for every value, plain addresses and the ones around them alike.

const LOCAL = 'abcxyzABCXYZ0189_+-';
/** Characters that make an address not plain, or change what nodemailer writes. */
const NEAR = ['.', '..', ' ', '"', ',', ';', '<', '>', '(', ')', '@', 'É', 'ü', '\t', '\\', '[', ']', ':', '=', '?', "'", '!', '#', '%', '&', '*', '/', '{', '|', '}', '~', '`', '^', '$', 'A', 'Z', '-', 'xn--', 'а'];
const DOMAIN = 'abcxyz0189-';

function generatedAddress(random: () => number): string {
  const pick = (s: string | string[]): string => s[Math.floor(random() * s.length)];
  const run = (alphabet: string, max: number): string => Array.from({ length: 1 + Math.floor(random() * max) }, () => pick(alphabet)).join('');
  const atoms = Array.from({ length: 1 + Math.floor(random() * 3) }, () => run(LOCAL, random() < 0.2 ? 40 : 12));
  const labels = Array.from({ length: 2 + Math.floor(random() * 3) }, () => run(DOMAIN, random() < 0.2 ? 30 : 10));
  let address = `${atoms.join('.')}@${labels.join('.')}`;
  // One in three is disturbed at a random place: a special, a capital letter in the domain,
  // non-ASCII, a leading or trailing dot or hyphen.
  if (random() < 0.35) {
    const at = Math.floor(random() * (address.length + 1));
    address = address.slice(0, at) + pick(NEAR) + address.slice(at);
  }
  return address;
}

test('addressField writes what headerField writes, over 4,000 generated addresses', () => {
  const random = seededRandom(2642);
  let plain = 0;
  let folded = 0;
  for (let i = 0; i < 4000; i++) {
    const address = generatedAddress(random);
    for (const key of ['To', 'Cc']) {
      const expected = headerField(key, address);
      assert.equal(addressField(key, address), expected, `${key}: ${JSON.stringify(address)}`);
      // As compose.ts hands a recipient over: one mailbox without a name.
      const mailbox = [{ name: '', address }];
      assert.equal(addressField(key, mailbox), headerField(key, mailbox), `${key}: ${JSON.stringify(mailbox)}`);
      if (expected === `${key}: ${address}`) plain++;
      if (expected?.includes('\r\n')) folded++;
    }
  }
  // The corpus reaches both sides: most are written as they are, some are folded or changed.
  assert.ok(plain > 4000, `plain ${plain}`);
  assert.ok(folded > 100, `folded ${folded}`);
});

test('addressField: the line length boundary, and values that are not one plain address', () => {
  for (const length of [70, 71, 72, 73, 74, 75, 76]) {
    const address = `${'a'.repeat(length - 'To: '.length - '@ex.com'.length)}@ex.com`;
    assert.equal(`To: ${address}`.length, length);
    assert.equal(addressField('To', address), headerField('To', address));
  }
  for (const value of ['A@Example.com', 'a@example.com, b@example.com', 'Name <a@example.com>', 'a.@example.com', '"a b"@example.com', 'a@jõgeva.ee', '', 'a@b', [{ name: '', address: 'a@example.com' }, { name: 'B', address: 'b@example.com' }], [{ name: 'A', address: 'a@example.com' }], [{ name: '', address: 'A@Example.com' }], [{ name: ' ', address: 'a@example.com' }]] as HeaderValue[]) {
    assert.equal(addressField('To', value), headerField('To', value), JSON.stringify(value));
  }
});
