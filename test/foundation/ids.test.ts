import { test } from 'node:test';
import assert from 'node:assert/strict';
import { v7 } from 'uuid';
import { createUuidV7Hex, hasPrefix, newId } from '../../src/ids.js';
import { seededRandom } from '../helpers/dkim-corpus.js';

/** A seeded byte stream: the same seed gives both generators the same "random" bytes. */
function byteStream(seed: number): (target: Uint8Array) => Uint8Array {
  const random = seededRandom(seed);
  return (target) => {
    for (let i = 0; i < target.length; i++) target[i] = Math.floor(random() * 256);
    return target;
  };
}

/**
 * A seeded clock in ms that mostly stays in one millisecond or moves on a little, sometimes
 * steps back (NTP) or jumps. Far in the future, above any real time uuid's own state saw.
 */
function clockSteps(seed: number, count: number): number[] {
  const random = seededRandom(seed);
  const out: number[] = [];
  let t = 4_000_000_000_000;
  for (let i = 0; i < count; i++) {
    const r = random();
    if (r < 0.45) t += 0;
    else if (r < 0.8) t += 1 + Math.floor(random() * 5);
    else if (r < 0.9) t -= 1 + Math.floor(random() * 1000);
    else t += Math.floor(random() * 10_000_000);
    out.push(t);
  }
  return out;
}

test('newId: the narrow UUIDv7 writes the bytes uuid v7() writes, given the same clock and random bytes (5,000 seeded ids)', () => {
  const times = clockSteps(2611, 5000);
  const ours = createUuidV7Hex(() => times[i], byteStream(77));
  const theirsBytes = byteStream(77);
  const realNow = Date.now;
  const realGetRandomValues = globalThis.crypto.getRandomValues;
  let i = 0;
  try {
    Date.now = () => times[i];
    Object.defineProperty(globalThis.crypto, 'getRandomValues', { value: theirsBytes, configurable: true, writable: true });
    for (i = 0; i < times.length; i++) {
      const expected = v7().replaceAll('-', '');
      assert.equal(ours(), expected, `id ${i} at ${times[i]}`);
    }
  } finally {
    Date.now = realNow;
    Object.defineProperty(globalThis.crypto, 'getRandomValues', { value: realGetRandomValues, configurable: true, writable: true });
  }
});

test('newId: ids of one process sort in creation order, within a millisecond and when the clock steps back', () => {
  const times = [5_000_000_000_000, 5_000_000_000_000, 5_000_000_000_000, 4_999_999_999_000, 5_000_000_000_001];
  let i = 0;
  const next = createUuidV7Hex(() => times[i++]);
  const ids = times.map(() => next());
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
});

test('newId: prefix, then 32 hex digits of a version 7, variant 10 UUID; unique across random-pool refills', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 3000; i++) {
    const id = newId('msg');
    assert.ok(hasPrefix(id, 'msg'), id);
    assert.equal(id[4 + 12], '7');
    assert.match(id[4 + 16], /[89ab]/);
    assert.ok(!seen.has(id));
    seen.add(id);
  }
});
