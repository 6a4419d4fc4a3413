/**
 * A document's link sites: read from a recent document it is a copy of (decision 0054), else
 * by the narrow scanner for the documents it covers, htmlparser2 for the rest (decision 0042).
 */
import { RecentDocuments } from '../../lib/document-copies.js';
import { SitesReference } from './copies.js';
import { parsedLinkSites } from './parsed.js';
import type { Sites } from './sites.js';

export { NOTRACK_ATTRIBUTE, type LinkSite, type Sites, type Splice } from './sites.js';

/**
 * Documents scanned whole recently, newest first: a worker's messages interleave a few
 * templates. A document that is a copy of none costs two short comparisons with each.
 */
const references = new RecentDocuments<SitesReference>(8);

export function linkSites(html: string): Sites {
  const copy = references.firstOf((reference) => reference.sitesOf(html));
  if (copy !== null) return copy;
  const read = SitesReference.read(html);
  if (read === null) return parsedLinkSites(html);
  references.add(read);
  return read.documentSites;
}
