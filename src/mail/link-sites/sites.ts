/**
 * What the tracking rewrite needs to know of a document: where each trackable link's href is
 * (and its URL, decoded), which notrack markers to remove, and where the closing </body> and
 * </html> are. Found once per distinct document (see ../html-rewrite.ts).
 */
export const NOTRACK_ATTRIBUTE = 'data-postline-notrack';

export interface Splice {
  start: number;
  end: number;
  text: string;
}

/** A trackable href: what stays around its value, and the URL. */
export interface LinkSite {
  start: number;
  end: number;
  /** The attribute name and whatever surrounds "=", as written. */
  prefix: string;
  quote: '"' | "'";
  /** Decoded and trimmed: what clickUrl is given. */
  url: string;
}

export interface Sites {
  links: LinkSite[];
  removals: Splice[];
  /** Offset of the "<" of the last </body> (-1: none). */
  bodyClose: number;
  /** Offset of the "<" of the last </html> (-1: none). */
  htmlClose: number;
}

/** An attribute as the tokenizer reports it. */
export interface AttributeSpan {
  /** Offset of the attribute name in the source. */
  start: number;
  /** Offset just past the attribute (past the closing quote, if any). */
  end: number;
  /** Entity-decoded. */
  value: string;
  /** `undefined`: no value at all (`<a href>`); `null`: an unquoted value. */
  quote: string | null | undefined;
}

const HTTP_URL = /^https?:\/\//i;
/** Browsers strip leading/trailing C0 controls and spaces from URLs. */
const URL_EDGES = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;

/** The link site of an `<a>`/`<area>`'s first href, or null when it is not an http(s) URL. */
export function linkSite(html: string, attr: AttributeSpan): LinkSite | null {
  if (attr.quote === undefined) return null;
  const url = attr.value.replace(URL_EDGES, '');
  if (!HTTP_URL.test(url)) return null;
  // Keep the name and whatever surrounds "=", as written; replace only the value.
  const m = /^([^\s=]+\s*=\s*)/.exec(html.slice(attr.start, attr.end));
  if (!m) return null;
  return { start: attr.start, end: attr.end, prefix: m[1], quote: attr.quote === "'" ? "'" : '"', url };
}

/** Remove an attribute together with the whitespace before it. */
export function removal(html: string, attr: AttributeSpan): Splice {
  let start = attr.start;
  while (start > 0 && /[\t\n\f\r ]/.test(html[start - 1])) start--;
  return { start, end: attr.end, text: '' };
}

/** What one `<a>`/`<area>` tag contributes once it is complete: its notrack removals, else its link. */
export function addTagSites(html: string, sites: Sites, href: AttributeSpan | null, notrack: AttributeSpan[]): void {
  if (notrack.length > 0) for (const span of notrack) sites.removals.push(removal(html, span));
  else if (href) {
    const site = linkSite(html, href);
    if (site) sites.links.push(site);
  }
}
