import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSites } from '../../src/mail/link-sites/index.js';
import { narrowLinkSites } from '../../src/mail/link-sites/narrow.js';
import { parsedLinkSites } from '../../src/mail/link-sites/parsed.js';
import { generateHtmlCorpus } from '../helpers/html-corpus.js';

// The narrow link-site scanner against the htmlparser2 tokenizer it stands in for: for every
// document it covers it must report exactly the parser's sites (each link's span, prefix,
// quote and decoded URL; each notrack removal; the last </body> and </html>), and decline
// the rest, which the parser then reads (decision 0042).
const CORPUS_SIZE = 4000;
const SEED = Number(process.env.HTML_CORPUS_SEED ?? 0x42c0ffee);

test(`narrow link sites equal htmlparser2's over ${CORPUS_SIZE} seeded documents; the rest fall back`, (t) => {
  const corpus = generateHtmlCorpus(CORPUS_SIZE, SEED);
  let covered = 0;
  let links = 0;
  let removals = 0;
  let closes = 0;
  for (const { index, html } of corpus) {
    const reference = parsedLinkSites(html);
    const narrow = narrowLinkSites(html);
    if (narrow !== null) {
      covered++;
      assert.deepEqual(narrow, reference, `document ${index} (seed ${SEED}): ${JSON.stringify(html)}`);
      links += narrow.links.length;
      removals += narrow.removals.length;
      if (narrow.bodyClose >= 0 || narrow.htmlClose >= 0) closes++;
    } else {
      assert.match(html, /<(?:svg|math)|[\x0f\x1c]/i, `document ${index} declined without a reason`);
    }
    assert.deepEqual(linkSites(html), reference, `document ${index}`);
  }
  // The comparison is not vacuous: most documents take the narrow path, with many sites.
  assert.ok(covered >= CORPUS_SIZE * 0.7, `covered ${covered}`);
  t.diagnostic(`covered ${covered} of ${CORPUS_SIZE}; links ${links}, removals ${removals}, documents with a close ${closes}`);
  assert.ok(links >= CORPUS_SIZE / 2 && removals >= CORPUS_SIZE / 10 && closes >= CORPUS_SIZE / 2, `links ${links}, removals ${removals}, closes ${closes}`);
});

test('narrow link sites: each document of the corpus, cut at every offset of a link, still equals the parser', () => {
  // Truncation inside a tag, an attribute value or an entity is where a scanner most often
  // diverges from the tokenizer's end-of-input rules.
  const corpus = generateHtmlCorpus(300, SEED ^ 0x5a5a);
  for (const { index, html } of corpus) {
    const first = html.search(/<a[\s/]/i);
    if (first < 0) continue;
    for (let cut = first; cut <= Math.min(html.length, first + 120); cut++) {
      const doc = html.slice(0, cut);
      const narrow = narrowLinkSites(doc);
      if (narrow !== null) assert.deepEqual(narrow, parsedLinkSites(doc), `document ${index} cut at ${cut}: ${JSON.stringify(doc)}`);
    }
  }
});

test('narrow link sites decline foreign content and the characters the tokenizer folds into "/" and "<"', () => {
  for (const html of ['<svg><a href="https://a.example/"/></svg>', '<MATH>', 'x\u000fy', 'x\u001cy']) {
    assert.equal(narrowLinkSites(html), null);
    assert.deepEqual(linkSites(html), parsedLinkSites(html));
  }
});
