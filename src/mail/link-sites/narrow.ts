/**
 * A document's link sites found by a scanner that knows only what the tracking rewrite needs:
 * where each tag, comment, declaration and raw-text element ends, the attributes of `<a>` and
 * `<area>`, and the closing </body> and </html>. It follows htmlparser2's tokenizer in HTML
 * mode (the reference, ./parsed.ts) rule for rule but jumps over text with indexOf instead of
 * visiting every character, and builds no strings but the few it reports: the parser was
 * ~0.27 ms of a distinct document's build.
 *
 * Returns null for a document it does not cover, which then goes to htmlparser2:
 * - `<svg` or `<math` anywhere: inside foreign content the parser's open-element stack
 *   changes the tokenizer (raw-text elements are not raw text there);
 * - U+000F or U+001C anywhere: the tokenizer compares `c | 0x20` with "/" and "<", which
 *   those two characters also match.
 * test/mail/html-rewrite-differential.test.ts proves it equal to the parser over a generated
 * corpus; decision 0042.
 */
import { decodeHTMLAttribute } from 'entities';
import { BANG, DASH, DQUOTE, endsName, EQ, GT, isAsciiAlpha, isWhitespace, LBRACKET, QUESTION, SLASH, SQUOTE } from '../html-chars.js';
import { addTagSites, NOTRACK_ATTRIBUTE, type AttributeSpan, type Sites } from './sites.js';

const UNCOVERED = /<(?:svg|math)|[\x0f\x1c]/i;

/** Elements whose content is text up to their own close tag; after <plaintext> everything is. */
const RAW_TEXT = new Set(['script', 'style', 'title', 'textarea', 'iframe', 'noembed', 'noframes', 'xmp']);


/** Offset just past the first ">" at or after `from`; -1 when there is none (the rest is ignored). */
function pastGt(html: string, from: number): number {
  const gt = html.indexOf('>', from);
  return gt < 0 ? -1 : gt + 1;
}

export function narrowLinkSites(html: string): Sites | null {
  if (isUncovered(html)) return null;
  const sites: Sites = { links: [], removals: [], bodyClose: -1, htmlClose: -1 };
  scanFrom(html, 0, sites, () => false);
  return sites;
}

/** Whether `text` holds what makes the scanner decline a document. */
export const isUncovered = (text: string): boolean => UNCOVERED.test(text);

/**
 * The scan from `at`, a place where the tokenizer is in text (the start, or where a token
 * ended), adding what it finds to `sites`. `stop` is asked at each such place, `at` first:
 * when it answers true the scan ends there and returns it; otherwise -1 once the document
 * ends. From a place in text, what the scan finds depends on nothing but the rest of the
 * document (./copies.ts relies on it).
 */
export function scanFrom(html: string, at: number, sites: Sites, stop: (at: number) => boolean): number {
  const n = html.length;
  while (at >= 0 && at < n) {
    if (stop(at)) return at;
    const lt = html.indexOf('<', at);
    if (lt < 0 || lt + 1 >= n) break;
    const c = html.charCodeAt(lt + 1);
    if (isAsciiAlpha(c)) at = openTag(html, lt + 1, sites);
    else if (c === SLASH) at = closeTag(html, lt + 2, sites);
    else if (c === BANG) at = markupDeclaration(html, lt + 2);
    else if (c === QUESTION) at = pastGt(html, lt + 2);
    // Any other character: the "<" was text.
    else at = lt + 1;
  }
  return -1;
}

/** `</name`: the name runs to whitespace, "/" or ">", the tag to the next ">". */
function closeTag(html: string, start: number, sites: Sites): number {
  if (start >= html.length) return -1;
  const c = html.charCodeAt(start);
  if (c === GT) return start + 1;
  // "</ x>", "</1>": a bogus comment up to the next ">".
  if (!isAsciiAlpha(c)) return pastGt(html, start + 1);
  let end = start + 1;
  while (end < html.length && !endsName(html.charCodeAt(end))) end++;
  if (end >= html.length) return -1;
  // The tokenizer reports the name as soon as it ends, whether or not a ">" follows.
  const length = end - start;
  if (length === 4 || length === 5) {
    const name = html.slice(start, end).toLowerCase();
    if (name === 'body') sites.bodyClose = start - 2;
    else if (name === 'html') sites.htmlClose = start - 2;
  }
  return html.charCodeAt(end) === GT ? end + 1 : pastGt(html, end + 1);
}

/** After `<!`: a comment, CDATA (a comment in HTML), a doctype or a bogus comment. */
function markupDeclaration(html: string, start: number): number {
  const n = html.length;
  if (start >= n) return -1;
  const c = html.charCodeAt(start);
  if (c === LBRACKET) {
    if (html.startsWith('CDATA[', start + 1)) {
      const close = html.indexOf(']]>', start + 7);
      return close < 0 ? -1 : close + 3;
    }
    return pastGt(html, start + 1);
  }
  if (c !== DASH) return pastGt(html, start);
  if (start + 1 >= n) return -1;
  const d = html.charCodeAt(start + 1);
  if (d === GT) return start + 2;
  if (d !== DASH) return pastGt(html, start + 2);
  // `<!--`: ends at `-->` or `--!>`; `<!-->` and `<!--->` are empty comments.
  const body = start + 2;
  if (body < n && html.charCodeAt(body) === GT) return body + 1;
  if (body + 1 < n && html.charCodeAt(body) === DASH && html.charCodeAt(body + 1) === GT) return body + 2;
  const close = html.indexOf('-->', body);
  const bang = html.indexOf('--!>', body);
  if (close < 0 && bang < 0) return -1;
  if (bang < 0 || (close >= 0 && close + 3 <= bang + 4)) return close + 3;
  return bang + 4;
}

/**
 * An open tag from its name (at `start`) to its ">": its attributes are read to find that ">"
 * (a quoted value may hold one), and kept for `<a>` and `<area>`. Returns where the text after
 * it (or after a raw-text element's content) starts; -1 when the document ends first, in which
 * case the tokenizer ignores the tag and there is nothing after it.
 */
function openTag(html: string, start: number, sites: Sites): number {
  const n = html.length;
  let p = start + 1;
  while (p < n && !endsName(html.charCodeAt(p))) p++;
  if (p >= n) return -1;
  const nameLength = p - start;
  let name = '';
  let linkTag = false;
  if (nameLength <= 9) {
    name = html.slice(start, p).toLowerCase();
    linkTag = name === 'a' || name === 'area';
  }
  let href: AttributeSpan | null = null;
  const notrack: AttributeSpan[] = [];
  for (;;) {
    if (p >= n) return -1;
    let c = html.charCodeAt(p);
    if (c === GT) break;
    if (c === SLASH || isWhitespace(c)) {
      // "/" not followed by ">" is like whitespace; "/>" ends the tag as ">" does in HTML.
      p++;
      continue;
    }
    // An attribute name: this character, then up to "=" or whitespace, "/", ">".
    const nameStart = p;
    p++;
    while (p < n && (c = html.charCodeAt(p)) !== EQ && !endsName(c)) p++;
    const nameEnd = p;
    while (p < n && isWhitespace(html.charCodeAt(p))) p++;
    if (p >= n) return -1;
    if (html.charCodeAt(p) !== EQ) {
      // No value; what follows is read afresh (another attribute, "/" or ">").
      if (linkTag) note(nameEnd, { start: nameStart, end: nameEnd, value: '', quote: undefined });
      continue;
    }
    p++;
    while (p < n && isWhitespace(html.charCodeAt(p))) p++;
    if (p >= n) return -1;
    c = html.charCodeAt(p);
    if (c === DQUOTE || c === SQUOTE) {
      const close = html.indexOf(c === DQUOTE ? '"' : "'", p + 1);
      if (close < 0) return -1;
      if (linkTag) note(nameEnd, { start: nameStart, end: close + 1, value: html.slice(p + 1, close), quote: c === DQUOTE ? '"' : "'" });
      p = close + 1;
    } else {
      // Unquoted: up to whitespace or ">" ("/" belongs to the value).
      const valueStart = p;
      while (p < n && !isWhitespace((c = html.charCodeAt(p))) && c !== GT) p++;
      if (p >= n) return -1;
      if (linkTag) note(nameEnd, { start: nameStart, end: p, value: html.slice(valueStart, p), quote: null });
    }
  }
  if (linkTag) addTagSites(html, sites, href, notrack);
  const after = p + 1;
  if (name === 'plaintext') return -1;
  if (!RAW_TEXT.has(name)) return after;
  return pastRawText(html, after, name);

  /** Only the first href counts, as in browsers; its value is what the parser would report, entity-decoded. */
  function note(nameEnd: number, span: AttributeSpan): void {
    const length = nameEnd - span.start;
    if (length === 4 && href === null && html.slice(span.start, nameEnd).toLowerCase() === 'href') {
      if (span.value.includes('&')) span.value = decodeHTMLAttribute(span.value);
      href = span;
    } else if (length === NOTRACK_ATTRIBUTE.length && html.slice(span.start, nameEnd).toLowerCase() === NOTRACK_ATTRIBUTE) {
      notrack.push(span);
    }
  }
}

/** A raw-text element's content runs to `</name` followed by whitespace, "/" or ">" (any case). */
function pastRawText(html: string, from: number, name: string): number {
  const n = html.length;
  let at = from;
  for (;;) {
    const lt = html.indexOf('</', at);
    if (lt < 0) return -1;
    const end = lt + 2 + name.length;
    if (end >= n) return -1;
    if (html.slice(lt + 2, end).toLowerCase() === name && endsName(html.charCodeAt(end))) {
      return html.charCodeAt(end) === GT ? end + 1 : pastGt(html, end + 1);
    }
    at = lt + 1;
  }
}
