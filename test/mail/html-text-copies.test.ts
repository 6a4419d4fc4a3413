import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockwiseText, documentText, readDocument, type Leaf } from '../../src/mail/html-text/blocks.js';
import { ReadReference } from '../../src/mail/html-text/copies.js';
import { convertHtml } from '../../src/mail/html-text/convert.js';
import { htmlToText } from '../../src/mail/html-text/index.js';
import { seededRandom } from '../helpers/dkim-corpus.js';
import { generateEmailHtmlCorpus, generateLeafBlocks } from '../helpers/email-html-corpus.js';

// A copy of a document read before is read as that document's blocks with the changed leaves
// read again (docs/decisions/0050-build-step-from-written-strings.md): whenever it is, its
// text must be what reading the copy whole gives, and reading it whole must cover it.
const SEED = Number(process.env.HTML_CORPUS_SEED ?? 0x2642c0de);
const byLeaf = (leaves: readonly Leaf[]) => leaves.map((leaf) => convertHtml(leaf.source));

test('a copy read from an earlier document gives the text of the copy read whole, over four copies each of 3,000 seeded documents', (t) => {
  const documents = generateEmailHtmlCorpus(3000, SEED);
  const leafPool = generateLeafBlocks(2000, SEED + 1);
  const random = seededRandom(SEED + 2);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const DISTURBANCES = ['x', ' ', '\n', '<', '</p>', '<p>', '<br>', '<!-- c -->', '<b>', '</div>', '<svg>', '<body>', '&amp;', '"', '>'];
  let copies = 0;
  let asCopy = 0;
  let changedLeaves = 0;
  for (const html of documents) {
    const read = readDocument(html);
    if (read === null || !ReadReference.accepts(read)) continue;
    const reference = new ReadReference(html, read, byLeaf(read.leaves));
    for (let k = 0; k < 4; k++) {
      // Leaves replaced by a leaf of the same element (a merge field's text), by any generated
      // block, or the copy disturbed at a random place (inside a leaf, between leaves, in the head or tail).
      let copy = '';
      let at = 0;
      for (const leaf of read.leaves) {
        copy += html.slice(at, leaf.start);
        const r = random();
        if (r < 0.25) copy += leaf.source.replace(/>([^<]*)</, (_, text: string) => `>${text}${pick(['Zoë', 'A-1', ' ', '', 'x'.repeat(int(90))])}<`);
        else if (r < 0.35) copy += pick(leafPool);
        else if (r < 0.4) copy += `<${leaf.name}>${pick(leafPool)}</${leaf.name}>`;
        else copy += leaf.source;
        at = leaf.start + leaf.source.length;
      }
      copy += html.slice(at);
      const disturbance = random();
      if (disturbance < 0.3) {
        const place = int(copy.length + 1);
        copy = copy.slice(0, place) + pick(DISTURBANCES) + copy.slice(place);
      } else if (disturbance < 0.6) {
        // One character replaced: the copy keeps its length, and every leaf its place.
        const place = int(copy.length);
        copy = copy.slice(0, place) + pick(['x', ' ', '<', '>', '/', 'p', 'd', '"', '-', '!']) + copy.slice(place + 1);
      }
      copies++;
      const found = reference.leavesOf(copy);
      const whole = blockwiseText(copy, byLeaf);
      if (found === null) continue;
      asCopy++;
      changedLeaves += found.changed.length;
      assert.notEqual(whole, null, `read as a copy, not covered whole: ${JSON.stringify(copy)}`);
      const texts = reference.texts.slice();
      for (const leaf of found.changed) texts[leaf.index] = convertHtml(leaf.source);
      assert.equal(documentText(reference.body, texts), whole, `copy of ${JSON.stringify(html)}: ${JSON.stringify(copy)}`);
    }
  }
  t.diagnostic(`${copies} copies, ${asCopy} read as copies, ${changedLeaves} changed leaves read`);
  assert.ok(asCopy >= 2000, `read as copies ${asCopy}`);
  assert.ok(changedLeaves >= 1000, `changed leaves ${changedLeaves}`);
  assert.ok(copies - asCopy >= 500, `declined ${copies - asCopy}`);
});

test('htmlToText: copies of a template read from the first one, interleaved with other documents, equal html-to-text', () => {
  const template = (name: string, order: string) =>
    `<html><body><h1>Hello ${name}</h1><p>Your order <b>${order}</b> has shipped. <a href="https://a.example/t?o=${order}">Track it</a>.</p>` +
    '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.</p>'.repeat(5) +
    '</body></html>';
  const other = (i: number) => `<html><body><div><p>Other ${i}</p><ul><li>a</li><li>b ${i}</li></ul></div></body></html>`;
  for (let i = 0; i < 40; i++) {
    for (const html of [template(`User ${i}`, `A-${i}`), other(i), template(i % 2 ? 'Zoë' : '<i>x</i>', `<svg>${i}`), template(`</h1><p>${i}`, '')]) {
      assert.equal(htmlToText(html), convertHtml(html), JSON.stringify(html));
    }
  }
});

test('a copy whose rest matches the common suffix at another distance from the end is not read from the earlier leaves', () => {
  // Repeated blocks make the common suffix long: a grown first leaf and two blocks fewer leave
  // the walk inside it, at a place that is not the earlier one shifted by the change in length.
  const block = '<p>x</p>';
  for (const [name, grown, dropped] of [['A', 'A12345678', 2], ['A', 'A1234', 1], ['Ann', 'A', 0], ['A', 'A123456781234567', 2]] as const) {
    const earlier = `<html><body><h1>${name}</h1>${block.repeat(6)}</body></html>`;
    const read = readDocument(earlier)!;
    const reference = new ReadReference(earlier, read, byLeaf(read.leaves));
    const copy = `<html><body><h1>${grown}</h1>${block.repeat(6 - dropped)}</body></html>`;
    const found = reference.leavesOf(copy);
    if (dropped > 0) assert.equal(found, null, copy);
    else assert.deepEqual(found?.leaves.slice(1), read.leaves.slice(1), copy);
    assert.equal(htmlToText(earlier), convertHtml(earlier));
    assert.equal(htmlToText(copy), convertHtml(copy), copy);
  }
});
