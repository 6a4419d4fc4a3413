import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../src/http/input-text.js';
import { seededRandom } from '../helpers/dkim-corpus.js';

/** The byte walk alone, as jsonDepthExceeds did before its bracket-count shortcut. */
function walkDepthExceeds(body: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

test('jsonDepthExceeds: at and past the limit, brackets in strings not counted as nesting', () => {
  const nested = (n: number) => Buffer.from('['.repeat(n) + ']'.repeat(n));
  assert.equal(jsonDepthExceeds(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH), false);
  assert.equal(jsonDepthExceeds(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH), true);
  assert.equal(jsonDepthExceeds(Buffer.from(`{"html":"${'{{ x }}'.repeat(40)}"}`), MAX_JSON_DEPTH), false, '80 braces in a string, nesting 1');
  assert.equal(jsonDepthExceeds(Buffer.from(`{"a":"\\"${'['.repeat(40)}"}`), MAX_JSON_DEPTH), false, 'an escaped quote does not end the string');
  assert.equal(jsonDepthExceeds(Buffer.from(`{"a":${'{"b":'.repeat(40)}1${'}'.repeat(40)}}`), MAX_JSON_DEPTH), true);
});

test('jsonDepthExceeds: answers as the plain byte walk on 3,000 generated bodies', () => {
  const rnd = seededRandom(0x0de9);
  const tokens = ['[', ']', '{', '}', '"', '\\', 'a', ':', ',', '{{ x }}', '"[[[["', ' '];
  let deep = 0;
  for (let n = 0; n < 3000; n++) {
    const length = Math.floor(rnd() * 120);
    const body = Buffer.from(Array.from({ length }, () => tokens[Math.floor(rnd() * tokens.length)]).join(''));
    const limit = 1 + Math.floor(rnd() * 12);
    const expected = walkDepthExceeds(body, limit);
    if (expected) deep++;
    assert.equal(jsonDepthExceeds(body, limit), expected, `${body.toString()} (limit ${limit})`);
  }
  assert.ok(deep > 300 && deep < 2700, `both answers are exercised (${deep} too deep)`);
});
