/**
 * Tracking rewrite of an HTML body: every http(s) link through the click tracker, an
 * optional footer and open pixel before `</body>`.
 *
 * The document is tokenised by htmlparser2's rules (./link-sites: a narrow scanner proven equal
 * to it, the parser itself for what the scanner does not cover; never a regex), but the output
 * is the ORIGINAL source with a few splices: the value of each tracked `href`, the removed
 * notrack marker, and the inserted footer + pixel. Everything else (comments, Outlook
 * conditional comments, entities, attribute order and quoting, odd or broken markup) is
 * preserved byte for byte; re-serialising a DOM would normalise all of it and break carefully
 * hand-tuned email HTML.
 *
 * Rules:
 * - `<a href>` and `<area href>` whose value, entity-decoded and trimmed, starts with
 *   `http://` or `https://` (any case) → `clickUrl(decodedUrl)`, written back HTML-escaped
 *   (single quotes kept if the original used them, double quotes otherwise). Only the first
 *   `href` of a tag counts, as in browsers.
 * - mailto:, tel:, #fragment, relative and other-scheme links, and links carrying
 *   `data-postline-notrack`, are left untouched. The notrack marker itself is REMOVED from the
 *   output (with the whitespace before it): it is an instruction to Postline, not markup
 *   meant for recipients.
 * - Markup inside comments (including `<!--[if mso]>…<![endif]-->`), `<script>`, `<style>`,
 *   `<textarea>` and `<title>` is text to the tokenizer, so links there are not touched.
 * - `footerHtml` then the pixel are inserted just before the last `</body>`; without one,
 *   before the last `</html>`; without either, appended at the end.
 */
import { ContentCache } from '../lib/content-cache.js';
import { linkSites, NOTRACK_ATTRIBUTE, type Sites, type Splice } from './link-sites/index.js';

export { NOTRACK_ATTRIBUTE };

export interface RewriteOptions {
  /** The tracking URL for one http(s) link (given decoded); `null` leaves that link as it is. */
  clickUrl: (originalUrl: string) => string | null;
  /** Open-pixel URL; no pixel when absent. */
  pixelUrl?: string;
  /** Raw HTML inserted before the pixel (e.g. the unsubscribe footer). */
  footerHtml?: string;
}

export function rewriteHtml(html: string, options: RewriteOptions): string {
  const sites = sitesOf(html);
  const splices: Splice[] = [...sites.removals];
  // In document order, as the links appear: clickUrl may note each one (the text part's links).
  for (const link of sites.links) {
    const tracked = options.clickUrl(link.url);
    if (tracked !== null) splices.push({ start: link.start, end: link.end, text: `${link.prefix}${link.quote}${escapeAttribute(tracked)}${link.quote}` });
  }
  const insertion = (options.footerHtml ?? '') + (options.pixelUrl !== undefined ? pixelTag(options.pixelUrl) : '');
  if (insertion) {
    const at = sites.bodyClose >= 0 ? sites.bodyClose : sites.htmlClose >= 0 ? sites.htmlClose : html.length;
    splices.push({ start: at, end: at, text: insertion });
  }
  return applySplices(html, splices);
}

/**
 * Where a document's splices go depends on the document alone, so it is parsed once per
 * distinct content: a campaign's or a template's copies differ only in their tracked URLs,
 * footer and pixel, which are put in place per copy. Bounded: the oldest entry goes first.
 */
const SITES_CACHE_ENTRIES = 64;
const sitesCache = new ContentCache<Sites>(SITES_CACHE_ENTRIES);

function sitesOf(html: string): Sites {
  let sites = sitesCache.get(html);
  if (sites === undefined) {
    sites = linkSites(html);
    sitesCache.set(html, sites);
  }
  return sites;
}

/** An invisible 1×1 image; alt="" so clients that block images show nothing. */
export function pixelTag(pixelUrl: string): string {
  return `<img src="${escapeAttribute(pixelUrl)}" width="1" height="1" alt="" style="display:none;width:1px;height:1px;border:0;" />`;
}

function applySplices(html: string, splices: Splice[]): string {
  if (splices.length === 0) return html;
  // Stable by position: the insertion sits at a "<" that no attribute span covers.
  splices.sort((a, b) => a.start - b.start || a.end - b.end);
  let out = '';
  let at = 0;
  for (const s of splices) {
    out += html.slice(at, s.start) + s.text;
    at = s.end;
  }
  return out + html.slice(at);
}

/** Tracking URLs have nothing to escape: tested first, they are returned as they are. */
function escapeAttribute(value: string): string {
  return ESCAPED.test(value) ? value.replace(/[&<>"']/g, (c) => ESCAPES[c]) : value;
}

const ESCAPED = /[&<>"']/;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
