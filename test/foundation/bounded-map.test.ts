import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedMap } from '../../src/lib/bounded-map.js';

test('BoundedMap keeps at most maxEntries, dropping the oldest when a new key comes', () => {
  const m = new BoundedMap<string, number>(3);
  m.set('a', 1).set('b', 2).set('c', 3);
  assert.equal(m.size, 3);
  m.set('d', 4);
  assert.equal(m.size, 3);
  assert.equal(m.has('a'), false, 'the oldest went');
  assert.deepEqual([...m].map(([k]) => k), ['b', 'c', 'd']);
});

test('BoundedMap: re-setting a key at the limit drops nothing and makes it the newest', () => {
  const m = new BoundedMap<string, number>(2);
  m.set('a', 1).set('b', 2);
  m.set('a', 10);
  assert.equal(m.size, 2);
  assert.deepEqual([...m], [['b', 2], ['a', 10]]);
  m.set('c', 3);
  assert.deepEqual([...m].map(([k]) => k), ['a', 'c'], 'b was then the oldest');
});

test('BoundedMap: one entry is the smallest size; zero, negative or fractional sizes are refused', () => {
  const one = new BoundedMap<number, number>(1);
  one.set(1, 1).set(2, 2);
  assert.deepEqual([...one], [[2, 2]]);
  for (const n of [0, -1, 1.5, Number.NaN]) assert.throws(() => new BoundedMap(n), RangeError);
});

test('BoundedMap: delete and clear free room', () => {
  const m = new BoundedMap<string, number>(2);
  m.set('a', 1).set('b', 2);
  assert.equal(m.delete('a'), true);
  m.set('c', 3);
  assert.deepEqual([...m].map(([k]) => k), ['b', 'c']);
  m.clear();
  assert.equal(m.size, 0);
  assert.equal(m.get('b'), undefined);
});
