import { test } from 'node:test';
import assert from 'node:assert/strict';
import { composeNarrow, composeWithLibrary, ComposeError } from '../../src/mail/compose.js';
import { generateComposeCorpus } from '../helpers/compose-corpus.js';

// The narrow writer (src/mail/mime/) must write exactly the bytes MailComposer writes for the
// same input and the same random boundary base (docs/decisions/0041-narrow-mime-composer.md).
// MailComposer's side is the path composeMessage took before the narrow writer: its compiled
// tree written by buildMimeSync, itself proven equal to nodemailer's build() by
// test/mail/mime-build.test.ts, or by build() where that walk does not cover the tree.

const CORPUS_SIZE = 2400;

test(`the narrow writer writes MailComposer's bytes for ${CORPUS_SIZE} seeded messages of every shape`, async () => {
  const corpus = generateComposeCorpus(CORPUS_SIZE, 0x5eed_0041);
  const traits = new Map<string, number>();
  let written = 0;
  const leftToLibrary: number[] = [];
  for (const { index, traits: these, input } of corpus) {
    for (const t of these) traits.set(t, (traits.get(t) ?? 0) + 1);
    const baseBoundary = (index * 2654435761 >>> 0).toString(16).padStart(16, 'c');
    let result: { narrow: Buffer | null; library: Buffer };
    try {
      result = { narrow: composeNarrow(input, baseBoundary), library: await composeWithLibrary(input, baseBoundary) };
    } catch (err) {
      assert.fail(`message ${index} was refused (${err instanceof ComposeError ? err.message : String(err)}): the corpus must be valid`);
    }
    if (result.narrow === null) {
      leftToLibrary.push(index);
      continue;
    }
    if (!result.narrow.equals(result.library)) {
      assert.equal(result.narrow.toString('latin1'), result.library.toString('latin1'), `message ${index} (${these.join(', ')})`);
    }
    written++;
  }
  // The writer covers what Postline sends; MailComposer keeps only the rare shapes.
  assert.ok(written >= 2000, `only ${written} of ${CORPUS_SIZE} were written by the narrow writer`);
  for (const [t, n] of traits) assert.ok(n >= 3, `trait "${t}" occurs only ${n} times`);
  for (const expected of ['8-bit name', 'emoji name', 'long ASCII subject (folded)', 'subject token past 998 octets (prepared words)', 'line past 998 octets', 'trailing whitespace', 'dot at line start', 'mostly non-Latin body (base64)', 'empty body', 'body near 64 KiB', '8-bit filename', 'IDN domain', 'message-id header', 'header token past 998 octets']) {
    assert.ok(traits.has(expected), `the corpus lacks "${expected}"`);
  }
  assert.ok(leftToLibrary.length > 0, 'the corpus has shapes left to MailComposer');
});
