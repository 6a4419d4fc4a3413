import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SitesReference } from '../../src/mail/link-sites/copies.js';
import { linkSites, type Sites } from '../../src/mail/link-sites/index.js';
import { narrowLinkSites } from '../../src/mail/link-sites/narrow.js';
import { parsedLinkSites } from '../../src/mail/link-sites/parsed.js';
import { compileTemplate, renderTemplate } from '../../src/templates/index.js';
import { seededRandom } from '../helpers/dkim-corpus.js';
import { generateHtmlCorpus } from '../helpers/html-corpus.js';

// A copy's link sites read from an earlier document (decision 0054) must be exactly what
// scanning the copy whole finds (the narrow scanner, itself proven equal to htmlparser2 by
// html-rewrite-differential), and a copy the scanner declines must not be read as a copy.
const CORPUS_SIZE = 2500;
const COPIES = 4;
const SEED = Number(process.env.HTML_CORPUS_SEED ?? 0x54c0de);

/** What a merge field or an edit puts in: values, and every piece of markup the scanner reads differently. */
const INSERTS = [
  'User 12', 'A-1234', 'Zoë', '', ' ', 'x'.repeat(40), '&amp;', '<', '>', '"', "'", '=', '/', '!', '-', '?',
  '</p>', '<p>', '<b>', '</b>', '<a href="https://m.example/?o=7">', '<a href=https://m.example/>', '</a>',
  ' data-postline-notrack', 'href="https://h.example/"', '<!--', '-->', '--!>', '<!-->', '<![CDATA[', ']]>', '<?x', '<!x',
  '</ x>', '<script>', '</script>', '<style>', '</style >', '<title>', '<plaintext>', '</body>', '</html>', '<body>',
  '<svg>', '<SVG', '<math', '\x0f', '\x1c', '< b', '<1', '\n',
];

test(`a copy's link sites read from the earlier document equal the copy scanned whole, ${COPIES} copies each of ${CORPUS_SIZE} seeded documents`, (t) => {
  const random = seededRandom(SEED);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  let references = 0;
  let copies = 0;
  let read = 0;
  let declined = 0;
  let withSites = 0;
  for (const { index, html } of generateHtmlCorpus(CORPUS_SIZE, SEED)) {
    const reference = SitesReference.read(html);
    if (reference === null) {
      assert.equal(narrowLinkSites(html), null, `document ${index} declined`);
      continue;
    }
    references++;
    assert.deepEqual(reference.documentSites, narrowLinkSites(html), `document ${index} read whole`);
    for (let c = 0; c < COPIES; c++) {
      // One to three edits at random places, a merge field's value near a link's URL in half of them.
      let copy = html;
      const edits = 1 + int(3);
      for (let e = 0; e < edits; e++) {
        const href = copy.indexOf('href', int(copy.length));
        const at = href >= 0 && random() < 0.5 ? href + 4 + int(12) : int(copy.length + 1);
        const removed = random() < 0.5 ? 0 : int(8);
        copy = copy.slice(0, at) + pick(INSERTS) + copy.slice(Math.min(copy.length, at + removed));
      }
      copies++;
      const expected = narrowLinkSites(copy);
      const found: Sites | null = reference.sitesOf(copy);
      if (expected === null) {
        assert.equal(found, null, `copy ${c} of document ${index} is declined by the scanner: ${JSON.stringify(copy)}`);
        declined++;
        continue;
      }
      if (found === null) continue;
      read++;
      if (found.links.length + found.removals.length > 0) withSites++;
      assert.deepEqual(found, expected, `copy ${c} of document ${index} (seed ${SEED}): ${JSON.stringify(html)} → ${JSON.stringify(copy)}`);
    }
  }
  t.diagnostic(`${references} documents read whole; ${copies} copies: ${read} read from the earlier document (${withSites} with sites), ${declined} declined by the scanner`);
  // Not vacuous: most copies are read from the earlier document, and some are declined.
  assert.ok(read >= copies * 0.6 && withSites >= copies * 0.3 && declined >= 50, `read ${read}, with sites ${withSites}, declined ${declined} of ${copies}`);
});

test('a template rendered per recipient: copies read from the first; merge fields far apart make the copy read whole', () => {
  const body = '<p>Lorem ipsum <a href="https://shop.example/help">help</a>.</p>'.repeat(20);
  const top = compileTemplate(`<html><body><h1>Hello {{ name }}</h1><p>Your order <b>{{ order }}</b>: <a href="https://shop.example/track?o={{ order }}">track it</a>.</p>${body}<p><a data-postline-notrack href="https://shop.example/u">u</a></p></body></html>`);
  const apart = compileTemplate(`<html><body><h1>Hello {{ name }}</h1>${body}<p>Bye {{ order }}</p></body></html>`);
  for (const template of [top, apart]) {
    const render = (name: string, order: string) => renderTemplate(template, { name, order }, 'html');
    const reference = SitesReference.read(render('Ann', 'A-1'))!;
    for (const [name, order] of [['Ann', 'A-1'], ['Bob', 'A-2'], ['Christopher', 'A-12345'], ['', ''], ['Zoë <b>', 'A-"1"'], ['<svg>', 'x']]) {
      const copy = render(name, order);
      const expected = narrowLinkSites(copy);
      const found = reference.sitesOf(copy);
      if (template === top && expected !== null) assert.notEqual(found, null, `${name} ${order} read from the first copy`);
      if (template === apart && name !== 'Ann') assert.equal(found, null, `${name} ${order}: the changed part spans the document`);
      if (found !== null) assert.deepEqual(found, expected, `${name} ${order}`);
      assert.deepEqual(linkSites(copy), expected ?? parsedLinkSites(copy), `${name} ${order} through linkSites`);
    }
  }
  assert.equal(SitesReference.read(renderTemplate(top, { name: 'a', order: 'b' }, 'html'))!.sitesOf('<p>another document altogether</p>'), null);
});
