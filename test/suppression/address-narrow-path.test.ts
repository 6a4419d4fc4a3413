import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressPartsByParser, plainAddressParts } from '../../src/domain/email-address.js';
import { seededRandom } from '../helpers/dkim-corpus.js';

/**
 * The narrow path of address parsing (plainAddressParts) must answer exactly as the RFC 5322
 * parser (email-addresses) for every address it takes, and take the everyday ones. A seeded
 * corpus of near misses around the everyday shape: dots out of place, quotes, comments,
 * whitespace, UTF-8, literals, underscores, one-label domains, a second `@`.
 */

const ATEXT = "abcxyzABCXYZ0189!#$%&'*+/=?^_`{|}~-";
const LDH = 'abcxyzABCXYZ0189-';
const ODD = ['.', '..', '"', ' ', '\t', '(', ')', '<', '>', '[', ']', ',', ';', ':', '\\', '@', 'é', 'ß', '中', '\u00a0', '_'];

function corpus(seed: number, size: number): string[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[] | string): T => xs[Math.floor(rnd() * xs.length)] as T;
  const run = (alphabet: string, max: number) => Array.from({ length: 1 + Math.floor(rnd() * max) }, () => pick<string>(alphabet)).join('');
  const dotted = (alphabet: string, parts: number, max: number) => Array.from({ length: parts }, () => run(alphabet, max)).join('.');
  const mutate = (s: string) => {
    const i = Math.floor(rnd() * (s.length + 1));
    return s.slice(0, i) + pick(ODD) + s.slice(i + (rnd() < 0.3 ? 1 : 0));
  };
  const out: string[] = [];
  while (out.length < size) {
    let local = dotted(ATEXT, 1 + Math.floor(rnd() * 3), rnd() < 0.05 ? 70 : 12);
    let domain = dotted(rnd() < 0.9 ? LDH : ATEXT, rnd() < 0.1 ? 1 : 2 + Math.floor(rnd() * 3), rnd() < 0.05 ? 70 : 10);
    const r = rnd();
    if (r < 0.25) local = mutate(local);
    else if (r < 0.45) domain = mutate(domain);
    else if (r < 0.5) local = `"${local}"`;
    else if (r < 0.53) domain = `[${domain}]`;
    else if (r < 0.56) domain = `${domain}.`;
    let address = `${local}@${domain}`;
    if (rnd() < 0.04) address = mutate(address);
    out.push(address);
  }
  return out;
}

test('address narrow path: equal to the RFC 5322 parser on 6,000 generated addresses, and taken by the everyday ones', () => {
  let narrow = 0;
  let parserOk = 0;
  for (const address of corpus(0x5eed0041, 6000)) {
    const fast = plainAddressParts(address);
    const parsed = addressPartsByParser(address);
    if ('local' in parsed) parserOk++;
    if (fast === null) continue;
    narrow++;
    assert.deepEqual(fast, parsed, `narrow path and parser disagree on ${JSON.stringify(address)}`);
  }
  // The corpus exercises both sides: many addresses go the narrow way, many must not.
  assert.ok(narrow >= 2000, `narrow path took ${narrow}`);
  assert.ok(6000 - narrow >= 1500, `only ${6000 - narrow} went to the parser`);
  assert.ok(parserOk > narrow, 'some addresses the parser accepts are left to it (quoted, UTF-8)');
});

test('address narrow path: takes everyday addresses, leaves the rest to the parser', () => {
  assert.deepEqual(plainAddressParts('Jane.Doe+news@Example.COM'), { local: 'Jane.Doe+news', domain: 'Example.COM' });
  assert.deepEqual(plainAddressParts("o'brien@mail.example.co.uk"), { local: "o'brien", domain: 'mail.example.co.uk' });
  for (const other of ['"a b"@example.com', 'jörg@example.de', 'a@exämple.de', 'a..b@example.com', '.a@example.com', 'a@example', 'a@[127.0.0.1]', 'a@example.com.', 'a(c)@example.com', 'a@b@example.com', 'a@exa_mple.com']) {
    assert.equal(plainAddressParts(other), null, other);
  }
});
