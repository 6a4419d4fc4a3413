/**
 * A document's link sites: the narrow scanner for the documents it covers, htmlparser2 for
 * the rest (decision 0042).
 */
import { narrowLinkSites } from './narrow.js';
import { parsedLinkSites } from './parsed.js';
import type { Sites } from './sites.js';

export { NOTRACK_ATTRIBUTE, type LinkSite, type Sites, type Splice } from './sites.js';

export function linkSites(html: string): Sites {
  return narrowLinkSites(html) ?? parsedLinkSites(html);
}
