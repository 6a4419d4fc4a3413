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

test('ContentCache: keeps the newest 8 entries of one length', () => {
  const cache = new ContentCache<number>(100);
  for (let i = 0; i < 9; i++) cache.set(`copy ${i}`, i);
  assert.equal(cache.get('copy 0'), undefined, 'dropped for a ninth of its length: recomputed by the caller');
  assert.equal(cache.get('copy 1'), 1);
  assert.equal(cache.get('copy 8'), 8);
  assert.equal(cache.size, 8);
  cache.set('other length', 10);
  assert.equal(cache.size, 9);
  cache.set('copy 0', 0);
  assert.equal(cache.get('copy 0'), 0);
  assert.equal(cache.get('copy 1'), undefined);
  assert.equal(cache.size, 9);
  // The ring still bounds the whole: 100 entries of distinct lengths, the oldest dropped.
  for (let i = 0; i < 100; i++) cache.set('x'.repeat(20 + i), i);
  assert.equal(cache.size, 100);
  assert.equal(cache.get('other length'), undefined);
  assert.equal(cache.get('x'.repeat(119)), 99);
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
