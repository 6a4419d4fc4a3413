/**
 * The text part derived from an HTML body: html-to-text's output (./convert.ts), put together
 * block by block for the documents ./blocks.ts covers, so that a document differing from
 * earlier ones in a few blocks converts only those (decision 0042).
 */
import { ContentCache } from '../../lib/content-cache.js';
import { blockwiseText, type Leaf } from './blocks.js';
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

export function htmlToText(html: string): string {
  return blockwiseText(html, textsOf) ?? convertHtml(html);
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
