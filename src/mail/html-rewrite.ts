/**
 * Tracking rewrite of an HTML body: every http(s) link through the click tracker, an
 * optional footer and open pixel before `</body>`.
 *
 * The document is tokenised with htmlparser2 (never regex), but the output is the ORIGINAL
 * source with a few splices: the value of each tracked `href`, the removed notrack marker,
 * and the inserted footer + pixel. Everything else (comments, Outlook conditional comments,
 * entities, attribute order and quoting, odd or broken markup) is preserved byte for byte;
 * re-serialising a DOM would normalise all of it and break carefully hand-tuned email HTML.
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
import { Parser } from 'htmlparser2';
import { BoundedMap } from '../lib/bounded-map.js';

export const NOTRACK_ATTRIBUTE = 'data-postline-notrack';

export interface RewriteOptions {
  /** The tracking URL for one http(s) link (given decoded); `null` leaves that link as it is. */
  clickUrl: (originalUrl: string) => string | null;
  /** Open-pixel URL; no pixel when absent. */
  pixelUrl?: string;
  /** Raw HTML inserted before the pixel (e.g. the unsubscribe footer). */
  footerHtml?: string;
}

interface Splice {
  start: number;
  end: number;
  text: string;
}

interface AttributeSpan {
  /** Offset of the attribute name in the source. */
  start: number;
  /** Offset just past the attribute (past the closing quote, if any). */
  end: number;
  value: string;
  /** `undefined`: no value at all (`<a href>`). */
  quote: string | null | undefined;
}

const HTTP_URL = /^https?:\/\//i;
/** Browsers strip leading/trailing C0 controls and spaces from URLs. */
const URL_EDGES = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;

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
const sitesCache = new BoundedMap<string, Sites>(SITES_CACHE_ENTRIES);

function sitesOf(html: string): Sites {
  let sites = sitesCache.get(html);
  if (sites === undefined) {
    sites = scan(html);
    sitesCache.set(html, sites);
  }
  return sites;
}

/** An invisible 1×1 image; alt="" so clients that block images show nothing. */
export function pixelTag(pixelUrl: string): string {
  return `<img src="${escapeAttribute(pixelUrl)}" width="1" height="1" alt="" style="display:none;width:1px;height:1px;border:0;" />`;
}

/** A document's link sites (a trackable href: what stays around its value, and the URL), notrack removals and insertion points. */
interface LinkSite {
  start: number;
  end: number;
  /** The attribute name and whatever surrounds "=", as written. */
  prefix: string;
  quote: '"' | "'";
  /** Decoded and trimmed: what clickUrl is given. */
  url: string;
}

interface Sites {
  links: LinkSite[];
  removals: Splice[];
  bodyClose: number;
  htmlClose: number;
}

function scan(html: string): Sites {
  const removals: Splice[] = [];
  const links: LinkSite[] = [];
  let bodyClose = -1;
  let htmlClose = -1;
  let tag = '';
  let href: AttributeSpan | null = null;
  let hrefSeen = false;
  let notrack: AttributeSpan[] = [];

  // Close tags are caught at the tokenizer callback, where the raw offsets are exact; the
  // handler's onclosetag also fires for implied closes and not for stray ones.
  class Locator extends Parser {
    override onclosetag(start: number, endIndex: number): void {
      const name = html.slice(start, endIndex).toLowerCase();
      // In HTML mode a close tag's name starts right after "</".
      if (name === 'body') bodyClose = start - 2;
      else if (name === 'html') htmlClose = start - 2;
      super.onclosetag(start, endIndex);
    }
  }

  const parser: Parser = new Locator(
    {
      onopentagname(name) {
        tag = name;
        href = null;
        hrefSeen = false;
        notrack = [];
      },
      onattribute(name, value, quote) {
        if (tag !== 'a' && tag !== 'area') return;
        // startIndex = attribute name start, endIndex = just past the attribute.
        const span: AttributeSpan = { start: parser.startIndex, end: parser.endIndex, value, quote };
        if (name === 'href' && !hrefSeen) {
          hrefSeen = true;
          href = span;
        } else if (name === NOTRACK_ATTRIBUTE) {
          notrack.push(span);
        }
      },
      onopentag() {
        if (tag === 'a' || tag === 'area') {
          if (notrack.length > 0) for (const span of notrack) removals.push(removal(html, span));
          else if (href) {
            const site = linkSite(html, href);
            if (site) links.push(site);
          }
        }
        tag = '';
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return { links, removals, bodyClose, htmlClose };
}

function linkSite(html: string, attr: AttributeSpan): LinkSite | null {
  if (attr.quote === undefined) return null;
  const url = attr.value.replace(URL_EDGES, '');
  if (!HTTP_URL.test(url)) return null;
  // Keep the name and whatever surrounds "=" as written; replace only the value.
  const m = /^([^\s=]+\s*=\s*)/.exec(html.slice(attr.start, attr.end));
  if (!m) return null;
  return { start: attr.start, end: attr.end, prefix: m[1], quote: attr.quote === "'" ? "'" : '"', url };
}

/** Remove an attribute together with the whitespace before it. */
function removal(html: string, attr: AttributeSpan): Splice {
  let start = attr.start;
  while (start > 0 && /[\t\n\f\r ]/.test(html[start - 1])) start--;
  return { start, end: attr.end, text: '' };
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

function escapeAttribute(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
