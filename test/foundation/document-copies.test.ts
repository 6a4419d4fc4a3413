import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changedSpan, commonPrefix, commonSuffix, RecentDocuments } from '../../src/lib/document-copies.js';
import { seededRandom } from '../helpers/dkim-corpus.js';

// The copy readers' shared search (docs/decisions/0060-one-copy-search.md): the chunked
// prefix/suffix search must give what comparing character by character gives.

function slowPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function slowSuffix(a: string, b: string, max: number): number {
  let n = 0;
  while (n < max && n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

/** What changedSpan must give: the longest prefix, then the longest suffix that does not overlap it. */
function slowSpan(earlier: string, copy: string): { prefix: number; suffix: number } {
  const prefix = slowPrefix(earlier, copy);
  return { prefix, suffix: slowSuffix(earlier, copy, Math.min(earlier.length, copy.length) - prefix) };
}

// Fresh string objects of the same content, as a row's content is.
const fresh = (s: string) => [...s].join('');

test('changedSpan: empty and identical documents', () => {
  assert.deepEqual(changedSpan('', ''), { prefix: 0, suffix: 0 });
  assert.deepEqual(changedSpan('', '<p>x</p>'), { prefix: 0, suffix: 0 });
  assert.deepEqual(changedSpan('<p>x</p>', ''), { prefix: 0, suffix: 0 });
  for (const length of [1, 7, 8, 9, 63, 64, 65, 200, 4096, 5000]) {
    const doc = 'abcdefghij'.repeat(Math.ceil(length / 10)).slice(0, length);
    // Identical: all prefix, nothing left for the suffix, whatever the chunk boundaries.
    assert.deepEqual(changedSpan(doc, fresh(doc)), { prefix: length, suffix: 0 }, `length ${length}`);
  }
});

test('changedSpan: a change at the start, at the end, and at every place around the chunk boundaries', () => {
  const doc = Array.from({ length: 600 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join('');
  assert.deepEqual(changedSpan(doc, `X${doc.slice(1)}`), { prefix: 0, suffix: doc.length - 1 });
  assert.deepEqual(changedSpan(doc, `${doc.slice(0, -1)}X`), { prefix: doc.length - 1, suffix: 0 });
  assert.deepEqual(changedSpan(doc, `XY${doc}`), { prefix: 0, suffix: doc.length });
  assert.deepEqual(changedSpan(doc, `${doc}XY`), { prefix: doc.length, suffix: 0 });
  for (const at of [1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 447, 448, 449, 598]) {
    const replaced = `${doc.slice(0, at)}#${doc.slice(at + 1)}`;
    assert.deepEqual(changedSpan(doc, replaced), { prefix: at, suffix: doc.length - at - 1 }, `replaced at ${at}`);
    const inserted = `${doc.slice(0, at)}#${doc.slice(at)}`;
    assert.deepEqual(changedSpan(doc, inserted), { prefix: at, suffix: doc.length - at }, `inserted at ${at}`);
    const removed = `${doc.slice(0, at)}${doc.slice(at + 1)}`;
    assert.deepEqual(changedSpan(doc, removed), slowSpan(doc, removed), `removed at ${at}`);
  }
});

test('changedSpan: a changed span longer than the earlier document; prefix and suffix never overlap', () => {
  const earlier = '<p>a</p>';
  const copy = `<p>${'x'.repeat(1000)}a</p>`;
  assert.deepEqual(changedSpan(earlier, copy), { prefix: 3, suffix: 5 });
  assert.deepEqual(changedSpan(copy, earlier), { prefix: 3, suffix: 5 });
  // A repeated document: its prefix is all of the shorter one, so no suffix is left to it.
  assert.deepEqual(changedSpan('abab', 'abababab'), { prefix: 4, suffix: 0 });
  assert.deepEqual(changedSpan('a'.repeat(300), 'a'.repeat(700)), { prefix: 300, suffix: 0 });
  // commonSuffix takes a bound past both lengths as the shorter length.
  assert.equal(commonSuffix('xyz', 'zzxyz', 1000), 3);
  assert.equal(commonSuffix('a'.repeat(100), 'a'.repeat(70), 1000), 70);
  assert.equal(commonSuffix('abc', 'abc', 2), 2);
  assert.equal(commonSuffix('abc', 'abc', 0), 0);
  assert.equal(commonPrefix('a'.repeat(70), 'a'.repeat(100)), 70);
});

test('changedSpan equals the character-by-character search over 5,000 seeded pairs', () => {
  const random = seededRandom(0x60c0de);
  const int = (n: number) => Math.floor(random() * n);
  const alphabet = ['a', 'b', '<', '>', 'p', ' ', 'é', '\n'];
  for (let k = 0; k < 5000; k++) {
    // Small alphabets make long accidental matches either side of an edit.
    const length = [0, 1, 8, 64, 65, 130, 1000, 5000][int(8)] + int(10);
    let doc = '';
    for (let i = 0; i < length; i++) doc += alphabet[int(k % 2 ? 2 : alphabet.length)];
    let copy = doc;
    for (let e = int(4); e > 0; e--) {
      const at = int(copy.length + 1);
      copy = copy.slice(0, at) + alphabet[int(alphabet.length)].repeat(int(3)) + copy.slice(Math.min(copy.length, at + int(4)));
    }
    assert.deepEqual(changedSpan(doc, copy), slowSpan(doc, copy), JSON.stringify([doc, copy]));
    const max = int(length + 2);
    assert.equal(commonSuffix(doc, copy, max), slowSuffix(doc, copy, max), JSON.stringify([doc, copy, max]));
  }
});

test('changedSpan: the last pair is answered again only for equal documents', () => {
  const earlier = '<h1>Hello Ann</h1><p>Order A-1</p>';
  const other = '<h1>Hi Ann</h1><p>Order A-1</p>';
  const copy = '<h1>Hello Bob</h1><p>Order A-1</p>';
  const first = changedSpan(earlier, copy);
  assert.deepEqual(first, { prefix: 10, suffix: 21 });
  assert.deepEqual(changedSpan(fresh(earlier), fresh(copy)), first);
  // Same copy, another earlier document; same earlier document, another copy.
  assert.deepEqual(changedSpan(other, copy), { prefix: 5, suffix: 21 });
  assert.deepEqual(changedSpan(earlier, copy), first);
  assert.deepEqual(changedSpan(earlier, other), { prefix: 5, suffix: 25 });
  assert.deepEqual(changedSpan(earlier, `${copy}!`), { prefix: 10, suffix: 0 });
});

test('RecentDocuments: newest first, the first answer that is not null, at most `size` kept', () => {
  const recent = new RecentDocuments<string>(3);
  const asked: string[] = [];
  const ask = (wanted: string) =>
    recent.firstOf((record) => {
      asked.push(record);
      return record === wanted ? `found ${record}` : null;
    });
  assert.equal(ask('a'), null);
  assert.deepEqual(asked, []);
  recent.add('a');
  recent.add('b');
  recent.add('c');
  assert.equal(recent.length, 3, 'at its size');
  asked.length = 0;
  assert.equal(ask('a'), 'found a');
  assert.deepEqual(asked, ['c', 'b', 'a'], 'newest first');
  asked.length = 0;
  assert.equal(ask('c'), 'found c');
  assert.deepEqual(asked, ['c'], 'stops at the first answer');
  recent.add('d');
  assert.equal(recent.length, 3, 'past its size: the oldest dropped');
  asked.length = 0;
  assert.equal(ask('a'), null);
  assert.deepEqual(asked, ['d', 'c', 'b']);
  // A falsy answer that is not null is an answer.
  assert.equal(recent.firstOf((record) => (record === 'b' ? '' : null)), '');
});

test('RecentDocuments: size is a whole number ≥ 1', () => {
  assert.throws(() => new RecentDocuments(0), RangeError);
  assert.throws(() => new RecentDocuments(2.5), RangeError);
  const one = new RecentDocuments<number>(1);
  one.add(1);
  one.add(2);
  assert.equal(one.length, 1);
  assert.equal(one.firstOf((n) => n), 2);
});
