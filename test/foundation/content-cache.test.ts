import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ContentCache } from '../../src/lib/content-cache.js';

// Keys are fresh strings, as a row's content is: equal content in another string object hits.
const fresh = (s: string) => [...s].join('');

test('ContentCache: finds equal content, tells apart content of the same length', () => {
  const cache = new ContentCache<number>(4);
  cache.set('<p>Hello Ana</p>', 1);
  cache.set('<p>Hello Bob</p>', 2);
  cache.set('<p>Hi</p>', 3);
  assert.equal(cache.get(fresh('<p>Hello Ana</p>')), 1);
  assert.equal(cache.get(fresh('<p>Hello Bob</p>')), 2);
  assert.equal(cache.get('<p>Hello Zoë</p>'), undefined);
  assert.equal(cache.get('<p>Hi</p>'), 3);
  assert.equal(cache.get(''), undefined);
  assert.equal(cache.size, 3);
});

test('ContentCache: holds at most maxEntries, dropping the oldest set first', () => {
  const cache = new ContentCache<number>(3);
  for (let i = 0; i < 5; i++) cache.set(`doc ${i}`, i);
  assert.equal(cache.size, 3);
  assert.equal(cache.get('doc 0'), undefined);
  assert.equal(cache.get('doc 1'), undefined);
  assert.deepEqual([2, 3, 4].map((i) => cache.get(`doc ${i}`)), [2, 3, 4]);
  cache.set('another length', 9);
  assert.equal(cache.get('doc 2'), undefined);
  assert.equal(cache.get('another length'), 9);
  assert.equal(cache.size, 3);
});

test('ContentCache: compares only the newest 8 entries of one length', () => {
  const cache = new ContentCache<number>(100);
  for (let i = 0; i < 9; i++) cache.set(`copy ${i}`, i);
  assert.equal(cache.get('copy 0'), undefined, 'past the scan: a miss, recomputed by the caller');
  assert.equal(cache.get('copy 1'), 1);
  assert.equal(cache.get('copy 8'), 8);
  cache.set('copy 0', 10);
  assert.equal(cache.get('copy 0'), 10);
});

test('ContentCache: maxEntries is a whole number ≥ 1', () => {
  assert.throws(() => new ContentCache(0), RangeError);
  assert.throws(() => new ContentCache(1.5), RangeError);
  const one = new ContentCache<string>(1);
  one.set('a', 'x');
  one.set('b', 'y');
  assert.equal(one.get('a'), undefined);
  assert.equal(one.get('b'), 'y');
});
