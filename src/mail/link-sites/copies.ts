/**
 * A document's link sites read from an earlier document it is a copy of: a template's
 * per-recipient copies differ in a few merged values (a name, an order number in a link), so
 * the narrow scanner (./narrow.ts) re-reads only the part that changed (decision 0054).
 *
 * The copy and the earlier document have a common prefix and a common suffix (found by
 * src/lib/document-copies.ts, which the derived text part's copies share). Up to the last
 * place before the prefix ends where the earlier scan was in text (a token's end), the scan of
 * the copy is the same, and so are the sites found there. From that place the copy is scanned
 * until it reaches, inside the common suffix, a place in text that the earlier scan also
 * passed at the same distance from the end: from a place in text the scan depends only on the
 * rest of the document, so from there on the sites are the earlier ones, shifted by the
 * difference in length. Without such a place the copy is simply scanned to its end. The
 * scanner declines a document for `<svg`, `<math`, U+000F or U+001C; the earlier document had
 * none, so only the changed part and the four characters either side of it are searched.
 * test/mail/link-sites-copies.test.ts proves it equal to scanning the copy whole.
 */
import { changedSpan } from '../../lib/document-copies.js';
import { isUncovered, scanFrom } from './narrow.js';
import type { LinkSite, Sites, Splice } from './sites.js';

/** The longest `<math` is five characters: a match that overlaps the changed part starts at most four before it. */
const UNCOVERED_REACH = 4;

export class SitesReference {
  private constructor(
    private readonly html: string,
    private readonly sites: Sites,
    /** Every place where the scan was in text, in order. */
    private readonly stops: readonly number[],
    /** Every </body> and </html> found, in order: the sites keep only the last. */
    private readonly closes: { body: readonly number[]; html: readonly number[] },
  ) {}

  /** The document scanned whole, or null when the narrow scanner does not cover it. */
  static read(html: string): SitesReference | null {
    if (isUncovered(html)) return null;
    const sites: Sites = { links: [], removals: [], bodyClose: -1, htmlClose: -1 };
    const stops: number[] = [];
    const closes = { body: [] as number[], html: [] as number[] };
    const noteCloses = (): void => {
      if (sites.bodyClose !== (closes.body.at(-1) ?? -1)) closes.body.push(sites.bodyClose);
      if (sites.htmlClose !== (closes.html.at(-1) ?? -1)) closes.html.push(sites.htmlClose);
    };
    scanFrom(html, 0, sites, (at) => {
      noteCloses();
      stops.push(at);
      return false;
    });
    noteCloses();
    return new SitesReference(html, sites, stops, closes);
  }

  get documentSites(): Sites {
    return this.sites;
  }

  /**
   * The sites of `copy`, or null when it is not read from this document: the scanner declines
   * it, or it shares too little with this document for re-reading a part to pay.
   */
  sitesOf(copy: string): Sites | null {
    const earlier = this.html;
    const { prefix, suffix } = changedSpan(earlier, copy);
    const changedEnd = copy.length - suffix;
    if (changedEnd - prefix > copy.length / 2) return null;
    if (isUncovered(copy.slice(Math.max(0, prefix - UNCOVERED_REACH), changedEnd + UNCOVERED_REACH))) return null;
    // A token may read the character at its end (a "<" followed by a space is text up to it),
    // so the scan resumes before the prefix ends, not at its end.
    const stops = this.stops;
    let k = 0;
    while (k + 1 < stops.length && stops[k + 1] < prefix) k++;
    const from = stops.length > 0 ? stops[k] : 0;
    const before = (site: { start: number }): boolean => site.start < from;
    const sites: Sites = {
      links: this.sites.links.filter(before),
      removals: this.sites.removals.filter(before),
      bodyClose: lastBefore(this.closes.body, from),
      htmlClose: lastBefore(this.closes.html, from),
    };
    const delta = copy.length - earlier.length;
    let resumed = -1;
    scanFrom(copy, from, sites, (at) => {
      if (at < changedEnd) return false;
      while (k < stops.length && stops[k] < at - delta) k++;
      if (k < stops.length && stops[k] === at - delta) resumed = stops[k];
      return resumed >= 0;
    });
    if (resumed < 0) return sites;
    const after = (site: { start: number }): boolean => site.start >= resumed;
    for (const link of this.sites.links) if (after(link)) sites.links.push(shifted(link, delta));
    for (const removal of this.sites.removals) if (after(removal)) sites.removals.push(shifted(removal, delta));
    if (this.sites.bodyClose >= resumed) sites.bodyClose = this.sites.bodyClose + delta;
    if (this.sites.htmlClose >= resumed) sites.htmlClose = this.sites.htmlClose + delta;
    return sites;
  }
}

function lastBefore(positions: readonly number[], end: number): number {
  let last = -1;
  for (const at of positions) if (at < end) last = at;
  return last;
}

function shifted<T extends LinkSite | Splice>(site: T, delta: number): T {
  return delta === 0 ? site : { ...site, start: site.start + delta, end: site.end + delta };
}
