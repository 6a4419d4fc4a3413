import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomHex } from '../../src/lib/random-pool.js';

test('randomHex: hex of the asked length, never the same bytes twice across pool refills', () => {
  const seen = new Set<string>();
  // 8-byte values over several 4 KB refills: a pool handed out twice would repeat values.
  for (let i = 0; i < 5000; i++) {
    const v = randomHex(8);
    assert.match(v, /^[0-9a-f]{16}$/);
    assert.ok(!seen.has(v), `repeated ${v}`);
    seen.add(v);
  }
  assert.match(randomHex(256), /^[0-9a-f]{512}$/);
  assert.match(randomHex(1), /^[0-9a-f]{2}$/);
});

test('randomHex: refuses lengths it cannot serve from one pool', () => {
  for (const bad of [0, -1, 257, 1.5, Number.NaN]) assert.throws(() => randomHex(bad), RangeError);
});
