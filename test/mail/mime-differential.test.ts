import { test } from 'node:test';
import assert from 'node:assert/strict';
import { composeNarrow, composeWithLibrary, ComposeError } from '../../src/mail/compose.js';
import { generateComposeCorpus } from '../helpers/compose-corpus.js';
import { generateTemplateCopiesCorpus } from '../helpers/template-copies-corpus.js';

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

// Per-recipient copies of templates (test/helpers/template-copies-corpus.ts), interleaved: the
// narrow writer's simple-text path (docs/decisions/0048-per-recipient-copies.md) and its
// header fields encoded once per distinct value must write what MailComposer writes for every
// copy, whatever was composed before it.
const COPIES = 2400;

test(`the narrow writer writes MailComposer's bytes for ${COPIES} seeded per-recipient copies of 40 templates`, async () => {
  const traits = new Map<string, number>();
  for (const { index, traits: these, input } of generateTemplateCopiesCorpus(COPIES, 0x5eed_0048)) {
    for (const t of these) traits.set(t, (traits.get(t) ?? 0) + 1);
    const baseBoundary = (index * 2654435761 >>> 0).toString(16).padStart(16, 'c');
    const narrow = composeNarrow(input, baseBoundary);
    const library = await composeWithLibrary(input, baseBoundary);
    assert.ok(narrow !== null, `copy ${index} was left to MailComposer`);
    if (!narrow.equals(library)) assert.equal(narrow.toString('latin1'), library.toString('latin1'), `copy ${index} (${these.join(', ')})`);
  }
  for (const expected of ['simple text', 'one hard line', 'many hard lines', 'line of 70-80 characters', 'trailing whitespace varies', 'surrogate pair', '8-bit template', 'tab in template', 'CR in template']) {
    assert.ok((traits.get(expected) ?? 0) >= 20, `the copies have "${expected}" only ${traits.get(expected) ?? 0} times`);
  }
  assert.ok((traits.get('simple text') ?? 0) >= 1000, `only ${traits.get('simple text')} copies take the simple-text path`);
});
