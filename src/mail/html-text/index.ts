/**
 * The text part derived from an HTML body: html-to-text's output (./convert.ts), computed block
 * by block for the documents ./blocks.ts covers, so that a document differing from earlier
 * ones in a few blocks converts only those (decision 0042).
 */
import { BoundedMap } from '../../lib/bounded-map.js';
import { blockwiseText } from './blocks.js';
import { convertHtml } from './convert.js';

/**
 * Block source → its text. A campaign's copies share all but their merge-field blocks; a hit
 * is set again so the shared blocks stay while each copy's own ones pass through.
 */
const LEAF_CACHE_ENTRIES = 1024;
const leafTexts = new BoundedMap<string, string>(LEAF_CACHE_ENTRIES);

function leafText(leafHtml: string): string {
  let text = leafTexts.get(leafHtml);
  if (text === undefined) text = convertHtml(leafHtml);
  leafTexts.set(leafHtml, text);
  return text;
}

export function htmlToText(html: string): string {
  return blockwiseText(html, leafText) ?? convertHtml(html);
}
