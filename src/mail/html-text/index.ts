/**
 * The text part derived from an HTML body: html-to-text's output (./convert.ts), put together
 * block by block for the documents ./blocks.ts covers, so that a document differing from
 * earlier ones in a few blocks converts only those (decision 0042), and, for a copy of a
 * document read recently (./copies.ts), reads only those (decision 0050).
 */
import { ContentCache } from '../../lib/content-cache.js';
import { RecentDocuments } from '../../lib/document-copies.js';
import { documentText, readDocument, type Leaf } from './blocks.js';
import { ReadReference } from './copies.js';
import { convertHtml } from './convert.js';
import { leafText } from './leaf.js';

/**
 * Block source → its text. A campaign's copies share all but their merge-field blocks, which
 * pass through. A hit is not set again: re-setting keys on every hit leaves the Map's deleted
 * slots for the oldest-key lookup to walk (it was a third of this path's time); a shared block
 * that ages out is converted once more.
 */
const LEAF_CACHE_ENTRIES = 1024;
/** Larger blocks (a whole table of inline cells) are converted each time: the cache stays under ~8 MB. */
const LEAF_CACHE_MAX_CHARS = 4096;
const leafTexts = new ContentCache<string>(LEAF_CACHE_ENTRIES);

/**
 * Documents read whole recently, newest first, that a copy is compared to: a worker's messages
 * interleave a few templates. A document that is no copy of any costs a prefix comparison each.
 */
const references = new RecentDocuments<ReadReference>(8);

export function htmlToText(html: string): string {
  const copy = references.firstOf((reference) => copyText(reference, html));
  if (copy !== null) return copy;
  const read = readDocument(html);
  if (read === null) return convertHtml(html);
  const texts = textsOf(read.leaves);
  if (ReadReference.accepts(read)) references.add(new ReadReference(html, read, texts));
  return documentText(read.body, texts);
}

/** The text of `html` read as a copy of `reference`, or null when it is not one. */
function copyText(reference: ReadReference, html: string): string | null {
  const copy = reference.leavesOf(html);
  if (copy === null) return null;
  const texts = reference.texts.slice();
  const changed = textsOf(copy.changed);
  copy.changed.forEach((leaf, i) => (texts[leaf.index] = changed[i]));
  return documentText(reference.body, texts);
}

function textsOf(leaves: readonly Leaf[]): string[] {
  return leaves.map(({ source }) => {
    let text = leafTexts.get(source);
    if (text === undefined) {
      text = leafText(source) ?? convertHtml(source);
      if (source.length <= LEAF_CACHE_MAX_CHARS) leafTexts.set(source, text);
    }
    return text;
  });
}
