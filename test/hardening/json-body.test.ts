import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { NOT_PLAIN, parsePlainJson } from '../../src/http/json-body.js';

/**
 * The JSON body's narrow path (src/http/json-body.ts) against Fastify's default parser, which
 * the app used for every body: over seeded generated bodies — keys `__proto__`, `constructor`
 * and `prototype` written plainly and with \u escapes, strings with escapes, a byte order mark,
 * empty and cut-off texts — parsing through the narrow path (falling back to the library where
 * it declines) gives the library's value or the library's error, every time. Dropping the
 * narrow path's `\u` check, or its `"constructor"` one, makes this test fail.
 */
const library = Fastify().getDefaultJsonParser('error', 'error');
type Outcome = { ok: string } | { error: string };

function libraryOutcome(text: string): Outcome {
  let out: Outcome | undefined;
  library({} as never, text, (err: Error | null, value: unknown) => {
    out = err ? { error: (err as Error & { code?: string }).code ?? err.message } : { ok: JSON.stringify(value) };
  });
  return out!;
}

function narrowOutcome(text: string): Outcome {
  const value = parsePlainJson(text);
  return value === NOT_PLAIN ? libraryOutcome(text) : { ok: JSON.stringify(value) };
}

/** mulberry32: a small seeded generator, so a failure names its input. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = ['to', 'html', 'name', '__proto__', 'constructor', 'prototype', 'proto', '_', 'constructors', 'a b', 'é'];
const TEXTS = ['Hi {{ name }}', '<a href="https://x.test/?a=1&b=2">x</a>', 'line\nbreak', 'tab\tand "quote" and \\ slash', '€ and 😀', '__proto__', 'constructor', '\\u0041'];

function generate(rnd: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  // A key or string written as JSON, some of its characters as \u escapes in either case.
  const quoted = (s: string) => {
    let out = '"';
    for (const ch of s) {
      const plain = JSON.stringify(ch).slice(1, -1);
      if (rnd() < 0.15 && ch.length === 1) {
        const hex = ch.charCodeAt(0).toString(16).padStart(4, '0');
        out += `\\u${rnd() < 0.5 ? hex : hex.toUpperCase()}`;
      } else out += plain;
    }
    return `${out}"`;
  };
  const ws = () => pick(['', '', ' ', '\n  ', '\t']);
  const value = (depth: number): string => {
    const r = rnd();
    if (depth > 3 || r < 0.3) return pick(['1', '-2.5e3', 'true', 'false', 'null', quoted(pick(TEXTS))]);
    if (r < 0.45) return `[${Array.from({ length: Math.floor(rnd() * 3) }, () => value(depth + 1)).join(',')}]`;
    if (r < 0.55) return `{${ws()}${quoted('constructor')}${ws()}:${ws()}{${quoted(pick(['prototype', 'x']))}:${value(depth + 1)}}}`;
    const n = Math.floor(rnd() * 4);
    return `{${Array.from({ length: n }, () => `${ws()}${quoted(pick(KEYS))}${ws()}:${ws()}${value(depth + 1)}`).join(',')}}`;
  };
  let text = value(0);
  const r = rnd();
  if (r < 0.04) text = `\ufeff${text}`;
  else if (r < 0.08) text = text.slice(0, Math.floor(rnd() * text.length));
  else if (r < 0.09) text = '';
  return text;
}

test('JSON body: the narrow path answers as the default parser over 5,000 generated bodies', () => {
  const rnd = random(20261127);
  let narrow = 0;
  let refused = 0;
  for (let i = 0; i < 5000; i++) {
    const text = generate(rnd);
    const expected = libraryOutcome(text);
    assert.deepEqual(narrowOutcome(text), expected, `body ${i}: ${JSON.stringify(text)}`);
    if (parsePlainJson(text) !== NOT_PLAIN) narrow++;
    if ('error' in expected) refused++;
  }
  // Both sides of the comparison are exercised: bodies the narrow path takes, bodies refused.
  assert.ok(narrow > 1000, `narrow path took ${narrow}`);
  assert.ok(refused > 500, `library refused ${refused}`);
});

test('JSON body: a __proto__ or constructor.prototype key, plain or escaped, is still refused', () => {
  for (const text of ['{"__proto__":{"x":1}}', '{"\\u005f_proto__":{}}', '{"a":{"constructor":{"prototype":{}}}}', '{"constru\\u0063tor":{"prototype":1}}']) {
    assert.equal(parsePlainJson(text), NOT_PLAIN, text);
    assert.ok('error' in libraryOutcome(text), text);
  }
  assert.deepEqual(parsePlainJson('{"to":"a@b.test","html":"<p>\\"hi\\"</p>"}'), { to: 'a@b.test', html: '<p>"hi"</p>' });
});
