/**
 * A document's link sites: read from a recent document it is a copy of (decision 0054), else
 * by the narrow scanner for the documents it covers, htmlparser2 for the rest (decision 0042).
 */
import { SitesReference } from './copies.js';
import { parsedLinkSites } from './parsed.js';
import type { Sites } from './sites.js';

export { NOTRACK_ATTRIBUTE, type LinkSite, type Sites, type Splice } from './sites.js';

/**
 * Documents scanned whole recently, newest first: a worker's messages interleave a few
 * templates. A document that is a copy of none costs two short comparisons with each.
 */
const REFERENCES = 8;
const references: SitesReference[] = [];

export function linkSites(html: string): Sites {
  for (const reference of references) {
    const sites = reference.sitesOf(html);
    if (sites !== null) return sites;
  }
  const read = SitesReference.read(html);
  if (read === null) return parsedLinkSites(html);
  references.unshift(read);
  if (references.length > REFERENCES) references.pop();
  return read.documentSites;
}
