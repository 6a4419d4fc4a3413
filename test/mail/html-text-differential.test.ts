import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockwiseText, type Leaf } from '../../src/mail/html-text/blocks.js';
import { convertHtml } from '../../src/mail/html-text/convert.js';
import { htmlToText } from '../../src/mail/html-text/index.js';
import { htmlToText as composeHtmlToText } from '../../src/mail/compose.js';
import { generateEmailHtmlCorpus } from '../helpers/email-html-corpus.js';

// The text part put together block by block against html-to-text on the whole document:
// byte-identical for every document the blockwise path covers, and the rest declined and
// converted whole (decision 0042).
const CORPUS_SIZE = 3000;
const byLeaf = (leaves: readonly Leaf[]) => leaves.map((leaf) => convertHtml(leaf.source));
const SEED = Number(process.env.HTML_CORPUS_SEED ?? 0x7e47c0de);

test(`blockwise text equals html-to-text over ${CORPUS_SIZE} seeded email documents; the rest fall back`, (t) => {
  const corpus = generateEmailHtmlCorpus(CORPUS_SIZE, SEED);
  let covered = 0;
  let blocks = 0;
  corpus.forEach((html, index) => {
    const reference = convertHtml(html);
    const blockwise = blockwiseText(html, (leaves) => leaves.map((leaf) => (blocks++, convertHtml(leaf.source))));
    if (blockwise !== null) {
      covered++;
      assert.equal(blockwise, reference, `document ${index} (seed ${SEED}): ${JSON.stringify(html)}`);
    }
    assert.equal(htmlToText(html), reference, `document ${index}`);
  });
  t.diagnostic(`covered ${covered} of ${CORPUS_SIZE}, ${blocks} blocks`);
  assert.ok(covered >= CORPUS_SIZE * 0.45, `covered ${covered}`);
  assert.ok(blocks >= covered * 3, `blocks ${blocks}`);
});

test('blockwise text: copies of a document that differ in one block convert only that block', () => {
  const copy = (name: string) =>
    `<html><body><h1>Hello ${name}</h1>\n${'<p>The same paragraph in every copy, long enough to be wrapped at the seventy-eighth column.</p>\n'.repeat(5)}</body></html>`;
  const converted: string[] = [];
  const convert = (leaf: string) => (converted.push(leaf), convertHtml(leaf));
  const seen = new Map<string, string>();
  const cached = (leaves: readonly Leaf[]) => leaves.map(({ source }) => seen.get(source) ?? (seen.set(source, convert(source)), seen.get(source)!));
  assert.equal(blockwiseText(copy('Ana'), cached), convertHtml(copy('Ana')));
  converted.length = 0;
  assert.equal(blockwiseText(copy('Zoë'), cached), convertHtml(copy('Zoë')));
  assert.deepEqual(converted, ['<h1>Hello Zoë</h1>']);
});

test('blockwise text covers the usual shapes of a transactional email', () => {
  for (const html of [
    '<html><head><title>Re: the <body> tag</title><style>p{}</style></head><body><h1>Hi</h1><p>x</p></body></html>',
    '<!DOCTYPE html>\r\n<html><body style="margin:0">\r\n  <!-- preheader -->\r\n  <p>Hello &amp; welcome,\n  <b>Zoë</b>: <a href="https://a.example/">your order</a>.</p>\r\n<script>var p = "<p>";</script><div><img src="x.png" alt="">Footer<br>line</div></body></html>',
    '<body><p>Your items:</p><ul><li>Two <b>mugs</b></li>\n<li>A <a href="https://a.example/t">teapot</a><li>Tea</ul><div>Total</div><ol start="3"><li>x</ol><ul> </ul><div>after an empty list</div></body>',
    '<body><table><tr><td><ul><li>in a cell</li></ul></td></tr></table><div><ul><li>loose <b>x</b></li>text in the list</ul></div></body>',
    '<?xml version="1.0" note="<body>"?><html><body><p>An XML declaration ends at its first ">".</p></body></html>',
    '<body><P ALIGN=center>upper-case</P ><h4 title="a > b">quoted ></h4></body>',
    '<body><center><table role="presentation" width="100%"><tr><td align="center"><table><tr><td><h1>Hi</h1><p>Your order</p></td></tr>' +
      '<tr><td><div><p>nested</p></div></td></tr></table></td></tr><tr><td><p>Footer <a href="https://a.example/u">unsubscribe</a></p></td></tr></table></center></body>',
  ]) {
    const blockwise = blockwiseText(html, byLeaf);
    assert.notEqual(blockwise, null, html);
    assert.equal(blockwise, convertHtml(html));
  }
});

test('blockwise text declines what it does not cover', () => {
  for (const html of [
    // A <b> left open before the body holds it: the stray </b> would close the paragraph and the body.
    '<b><body><p>x</b>y</p></body>',
    // The second <td> closes the first; the second </td> then closes the outer cell, and the div with it.
    '<body><table><tr><td><div><td><p>a</p><td><p>b</p></td></td><p>c</p></div></td></tr></table></body>',
    '<body><table><tr><td>Footer beside</td><td><p>a block</p></td></tr></table></body>',
    '<body><p>x</p>loose text</body>',
    '<body><ul><li>one<ul><li>a nested list</li></ul></li></ul></body>',
    '<body><ol><li><p>a block in an item</p></li></ol></body>',
    '<body><p>a list <ul><li>closes the paragraph</li></ul></p></body>',
    '<p>no body</p>',
  ]) {
    assert.equal(blockwiseText(html, byLeaf), null, html);
    assert.equal(htmlToText(html), convertHtml(html));
  }
});

test('compose keeps exporting htmlToText, the same function', () => {
  assert.equal(composeHtmlToText, htmlToText);
});
