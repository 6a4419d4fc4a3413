import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockwiseText } from '../../src/mail/html-text/blocks.js';
import { convertHtml } from '../../src/mail/html-text/convert.js';
import { leafText } from '../../src/mail/html-text/leaf.js';
import { generateEmailHtmlCorpus, generateLeafBlocks } from '../helpers/email-html-corpus.js';

// The narrow leaf converter against html-to-text on the same block source: byte-identical for
// every block it covers, the rest declined (and converted by html-to-text). Decision 0045.
const LEAVES = 4000;
const SEED = Number(process.env.HTML_CORPUS_SEED ?? 0x1eaf5eed);

test(`leaf text equals html-to-text over ${LEAVES} seeded leaf blocks; the rest are declined`, (t) => {
  let covered = 0;
  generateLeafBlocks(LEAVES, SEED).forEach((source, index) => {
    const text = leafText(source);
    if (text === null) return;
    covered++;
    assert.equal(text, convertHtml(source), `leaf ${index} (seed ${SEED}): ${JSON.stringify(source)}`);
  });
  t.diagnostic(`covered ${covered} of ${LEAVES}`);
  assert.ok(covered >= LEAVES * 0.85, `covered ${covered}`);
});

test('leaf text equals html-to-text for every leaf of the email corpus the blockwise path reads', (t) => {
  let leaves = 0;
  let covered = 0;
  for (const html of generateEmailHtmlCorpus(2000, SEED)) {
    blockwiseText(html, (blocks) =>
      blocks.map(({ source }) => {
        leaves++;
        const reference = convertHtml(source);
        const text = leafText(source);
        if (text !== null) {
          covered++;
          assert.equal(text, reference, JSON.stringify(source));
        }
        return reference;
      }),
    );
  }
  t.diagnostic(`covered ${covered} of ${leaves} leaves`);
  assert.ok(leaves >= 2000 && covered >= leaves * 0.8, `covered ${covered} of ${leaves}`);
});

test('leaf text covers the shapes of a per-recipient block', () => {
  for (const source of [
    '<h1>Hello Zoë</h1>',
    '<h1 style="x">Straße <a href="https://a.example/">https://a.example/</a></h1>',
    '<p>Your order <b>A-1042</b> has shipped. <a href="https://bench.test/track?o=A-1042">Track it</a> or <a href="https://bench.test/help">get help</a>.</p>',
    '<p>Write to <a href="mailto:help@shop.example">us</a>, or <a href="#top">go up</a>, <a href="https://x.example/"><img src="b.png" alt="Buy"></a>.</p>',
    `<p>${'word '.repeat(40)}<br>${'x'.repeat(90)} end<wbr>${'y'.repeat(80)}</p>`,
    '<div>Caf&eacute; &amp co &nbsp;&#x1F600; a&b<!-- c --><span>joined</span></div>',
    '<p><a HREF=\'https://a.example/?a=1&amp;b=2\' href="https://ignored.example/">first href</a></p>',
    '<p><b><a href="https://a.example/">ends with the b</b> after</p>',
    '<table role="presentation" width="100%"><tr><td align="center"><a href="https://a.example/?u=1">Track your order</a></td><td>Cell</td></tr></table>',
    '<table><tbody><tr><th>Head<td><b><a href="https://a.example/">ends with its cell</td><tr><td>next row</table>',
    '<div><center>centred</center> <td>a cell in a div</div>',
    `<ul>\n  <li>Two <b>mugs</b></li>\n  <li>${'A long item that wraps '.repeat(5)}<li><a href="https://a.example/o/1">Your order</a></ul>`,
    `<ol start="9"><li>nine</li><li>ten, ${'wrapped after the wider prefix '.repeat(3)}</li></ol>`,
    '<ol type="1" start="-1"><li>a<li>b<li>c</ol>',
    '<ul><li></li></ul>',
    '<ul> </ul>',
    '<div>a stray </br>is a line break<script>var x = 1;</script> and <style>b { color: red }</style>script and style add nothing</div>',
  ]) {
    const text = leafText(source);
    assert.notEqual(text, null, source);
    assert.equal(text, convertHtml(source), source);
  }
});

test('leaf text declines what it does not cover', () => {
  for (const source of [
    '<p><a href="https://a.example/">outer <a href="https://b.example/">inner</a></a></p>',
    '<p>a <ul><li>list</li></ul></p>',
    '<p>stray</span> close</p>',
    '<p>not closed',
    '<p>text</p> after',
    '<blockquote>q</blockquote>',
    '<p><td>wrappers only in a div or a table</td></p>',
    '<ul><li><b>x<li>an item inside an inline element</b></li></ul>',
    '<ul><li><b>x<li>an item inside an inline element, never closed</li></ul>',
    '<ul>loose text<li>x</li></ul>',
    '<ul><!-- a comment is an item --><li>x</li></ul>',
    '<ol type="a"><li>lettered</li></ol>',
    '<table><tr><td>stray</th></td></tr></table>',
  ]) {
    assert.equal(leafText(source), null, source);
  }
});
