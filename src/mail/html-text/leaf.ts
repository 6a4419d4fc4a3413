/**
 * The text of one leaf block (`<p>`, `<h1>`…`<h6>`, a `<div>` or layout `<table>` of inline
 * content, a `<ul>` or decimal `<ol>` of inline items) written
 * directly, without html-to-text: exactly what html-to-text (./convert.ts, our options) turns
 * that block's source into on its own, for the blocks this reader covers; null for the rest,
 * which ./index.ts gives to html-to-text.
 *
 * A block that differs per recipient (a greeting, an order line) was the one part of the text
 * part still converted by html-to-text on every message: its parse into a DOM, the selector
 * picker and its formatter machinery cost ~20-40 µs for a 150-character paragraph. Reading the
 * source once, as htmlparser2's tokenizer does (./blocks.ts), and applying html-to-text's
 * rules for what it meets is a few µs. The rules, for our options (78 columns, no long-word
 * splitting, images skipped, a link's URL hidden when it equals its text):
 *
 * - Text is entity-decoded and cut into words at ` \t\r\n\f` and U+200B (a no-break space is
 *   part of a word). A word that begins a text without whitespace before it, with no space
 *   stashed by the previous text, is joined to the last word of the line; every other word
 *   is a new one. A word goes on the line when it fits (its length, plus one for the space
 *   unless it starts the line), else on a new line (alone if it is longer than the line).
 * - `<br>` (and `</br>`) ends the line; `<wbr>` lets the next joined word move to a new line
 *   instead when it does not fit; `<img>`, comments, `<script>` and `<style>` add nothing.
 * - A heading upper-cases its words. A link with an href (`mailto:` removed, not a `#`
 *   fragment) collects its words as written (before upper-casing) and is followed by
 *   ` [href]`, or by the href alone when it has no words, or by nothing when its words joined
 *   without spaces equal the href.
 * - Other inline elements (./blocks.ts INLINE), and in a div or table the layout wrappers
 *   (tr, td, tbody…, center), add nothing of their own; a close tag ends every element opened
 *   after the one it closes, and a wrapper the ones it implies closed, as htmlparser2 does.
 *
 * - A list's items are laid out 78 columns less its longest prefix wide (` * `; ` N. ` counted
 *   from `start`), each prefixed, its further lines indented by that width, one line break
 *   between items.
 *
 * Declined (null): a link inside a link, text or a comment beside a list's items, an item
 * opened inside an inline element, lettered and roman lists, any element outside INLINE, a close tag that closes
 * nothing opened in the block, markup ./blocks.ts does not cover, a block other than these.
 * test/mail/html-text-leaf.test.ts proves it equal to html-to-text; decision 0045.
 */
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import { endsName, EQ, GT, isWhitespace, SLASH } from '../html-chars.js';
import { INLINE, pastRawText, SKIPPED_RAW_TEXT, tokenAt, Uncovered, WRAPPERS, type Token } from './blocks.js';

const LINE_LENGTH = 78;
const LEAF_BLOCKS = new Set(['p', 'div', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const LISTS = new Set(['ul', 'ol']);
const UL_PREFIX = ' * ';
/** Leaf blocks that may hold table wrappers (./blocks.ts reads those only in a div or a table). */
const WRAPPING_BLOCKS = new Set(['div', 'table']);
/** html-to-text's whitespace (its `whitespaceCharacters` default). */
function isTextSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 0x200b;
}

/** A link being read: its href and the words of its text so far. */
interface Link {
  href: string;
  text: string;
  /** Its place in the open-element stack: it ends when the stack is cut below it. */
  depth: number;
}

/** The words of one block, laid out in lines as html-to-text's inline builder does. */
class LineBuilder {
  /** Completed lines, each already joined. */
  private readonly lines: string[] = [];
  private words: string[] = [];
  private room: number;
  private stashedSpace = false;
  breakOpportunity = false;
  upperCase = false;
  link: Link | null = null;

  constructor(private readonly width = LINE_LENGTH) {
    this.room = width;
  }

  /** Text content: words split at whitespace, the first joined to the previous word unless whitespace separates them. */
  addText(text: string, transform: boolean): void {
    const n = text.length;
    if (n === 0) return;
    const spaceBefore = this.stashedSpace;
    let noWord = true;
    let i = 0;
    for (;;) {
      while (i < n && isTextSpace(text.charCodeAt(i))) i++;
      if (i >= n) break;
      const start = i;
      while (i < n && !isTextSpace(text.charCodeAt(i))) i++;
      const word = transform ? this.transformed(text.slice(start, i)) : text.slice(start, i);
      if (noWord && !spaceBefore && start === 0) this.concatWord(word);
      else this.pushWord(word);
      noWord = false;
    }
    this.stashedSpace = (spaceBefore && noWord) || isTextSpace(text.charCodeAt(n - 1));
  }

  private transformed(word: string): string {
    if (this.link !== null) this.link.text += word;
    return this.upperCase ? word.toUpperCase() : word;
  }

  /** (html-to-text also ends a line with no room left first; with nothing split and every word costing ≥ 1, that is this rule.) */
  private pushWord(word: string): void {
    const lineStart = this.words.length === 0;
    const cost = word.length + (lineStart ? 0 : 1);
    if (cost <= this.room) {
      this.words.push(word);
      this.room -= cost;
    } else {
      // Too long for what is left: on a line of its own start (never split).
      if (!lineStart) this.newLine();
      this.words.push(word);
      this.room -= word.length;
    }
  }

  private concatWord(word: string): void {
    if (this.breakOpportunity && word.length > this.room) {
      this.pushWord(word);
      this.breakOpportunity = false;
      return;
    }
    const last = this.words.pop();
    if (last === undefined) {
      this.pushWord(word);
      return;
    }
    this.room += last.length + (this.words.length === 0 ? 0 : 1);
    this.pushWord(last + word);
  }

  newLine(): void {
    this.lines.push(this.words.join(' '));
    this.words = [];
    this.room = this.width;
  }

  /** The link's trailer when it ends: " [href]", the href alone, or nothing when it is its own text. */
  endLink(): void {
    const link = this.link!;
    this.link = null;
    if (link.href === link.text) return;
    this.addText(link.text ? ` [${link.href}]` : link.href, false);
  }

  toString(): string {
    if (this.lines.length === 0 && this.words.length === 0) return '';
    this.lines.push(this.words.join(' '));
    return this.lines.join('\n');
  }
}

/** The first attribute `name` of a tag from past its name, read as htmlparser2 reads attributes (names lower-cased, values decoded, the first of a name kept). */
function attributeOf(html: string, from: number, name: string): string | undefined {
  const n = html.length;
  let p = from;
  for (;;) {
    if (p >= n) throw new Uncovered();
    let c = html.charCodeAt(p);
    if (c === GT) return undefined;
    if (c === SLASH || isWhitespace(c)) {
      p++;
      continue;
    }
    const nameStart = p++;
    while (p < n && (c = html.charCodeAt(p)) !== EQ && !endsName(c)) p++;
    const isHref = p - nameStart === name.length && html.slice(nameStart, p).toLowerCase() === name;
    while (p < n && isWhitespace(html.charCodeAt(p))) p++;
    if (p >= n) throw new Uncovered();
    if (html.charCodeAt(p) !== EQ) {
      if (isHref) return '';
      continue;
    }
    p++;
    while (p < n && isWhitespace(html.charCodeAt(p))) p++;
    if (p >= n) throw new Uncovered();
    c = html.charCodeAt(p);
    let value: string;
    if (c === 34 || c === 39) {
      const close = html.indexOf(c === 34 ? '"' : "'", p + 1);
      if (close < 0) throw new Uncovered();
      value = html.slice(p + 1, close);
      p = close + 1;
    } else {
      const start = p;
      while (p < n && !isWhitespace((c = html.charCodeAt(p))) && c !== GT) p++;
      value = html.slice(start, p);
    }
    if (isHref) return value.includes('&') ? decodeHTMLAttribute(value) : value;
  }
}

/** The URL html-to-text shows for a link, or '' for none (no href, a bare `mailto:`, a fragment). */
function shownHref(href: string | undefined): string {
  if (!href) return '';
  const shown = href.startsWith('mailto:') ? href.slice(7) : href;
  return shown.charCodeAt(0) === 35 /* # */ ? '' : shown;
}

/** A leaf block's text as html-to-text converts its source alone, or null when not covered. */
export function leafText(source: string): string | null {
  try {
    return readLeaf(source);
  } catch (e) {
    if (e instanceof Uncovered) return null;
    throw e;
  }
}

function readLeaf(html: string): string | null {
  const first = tokenAt(html, 0);
  if (first === null || first.kind !== 'open') return null;
  if (LISTS.has(first.name)) return readList(html, first);
  if (!LEAF_BLOCKS.has(first.name)) return null;
  const builder = new LineBuilder();
  builder.upperCase = first.name.charCodeAt(0) === 104 /* h */;
  const end = readInline(html, first.end, builder, first.name, WRAPPING_BLOCKS.has(first.name), false);
  return end !== null && end.kind === 'close' && end.end === html.length ? builder.toString() : null;
}

/**
 * Inline content from `from` into the builder, up to the token that ends it (returned): the
 * block's close tag, or in a list item `</li>` or the next item's `<li>`. Null when not covered.
 */
function readInline(html: string, from: number, builder: LineBuilder, block: string, wrapping: boolean, item: boolean): Token | null {
  const open: string[] = [];
  let textStart = from;
  let at = from;
  for (;;) {
    const lt = html.indexOf('<', at);
    if (lt < 0) return null;
    const token = tokenAt(html, lt);
    if (token === null) {
      at = lt + 1;
      continue;
    }
    if (lt > textStart) addSource(builder, html.slice(textStart, lt));
    at = textStart = token.end;
    if (token.kind === 'comment') continue;
    if (token.kind === 'doctype') return null;
    const name = token.name;
    if (token.kind === 'close') {
      const nearest = open.lastIndexOf(name);
      if (nearest >= 0) closeTo(builder, open, nearest);
      else if (name === block || (item && name === 'li')) {
        closeTo(builder, open, 0);
        return token;
      } else if (name === 'br') builder.newLine();
      else return null;
      continue;
    }
    if (SKIPPED_RAW_TEXT.has(name)) {
      at = textStart = pastRawText(html, token.end, name);
    } else if (name === 'br') {
      builder.newLine();
    } else if (name === 'wbr') {
      builder.breakOpportunity = true;
    } else if (name === 'img') {
      // Skipped (convert.ts): not even its alt.
    } else if (name === 'a') {
      if (open.includes('a')) return null;
      const href = shownHref(attributeOf(html, lt + 2, 'href'));
      if (href) builder.link = { href, text: '', depth: open.length };
      open.push(name);
    } else if (INLINE.has(name)) {
      open.push(name);
    } else if (wrapping && WRAPPERS.has(name)) {
      // Written through as if absent, but it closes what htmlparser2 says it implies (a cell the previous one).
      const closes = WRAPPERS.get(name)!;
      let depth = open.length;
      while (depth > 0 && closes.has(open[depth - 1])) depth--;
      closeTo(builder, open, depth);
      open.push(name);
    } else if (item && name === 'li' && open.length === 0) {
      // The next item closes this one (one opened inside an inline element would nest: not covered).
      return token;
    } else {
      return null;
    }
  }
}

/**
 * A list of items holding inline content, with only whitespace between them: each item wrapped
 * 78 columns less the longest prefix wide (` * `, or ` 1. ` from `start`), its lines after the
 * first indented by that width, one line break between items.
 */
function readList(html: string, first: Token): string | null {
  const ordered = first.name === 'ol';
  let next = 1;
  if (ordered) {
    const type = attributeOf(html, 3, 'type');
    if (type === 'a' || type === 'A' || type === 'i' || type === 'I') return null;
    next = Number(attributeOf(html, 3, 'start') || '1');
  }
  // An ordered list's prefix width depends on how many items it has: counted first.
  const count = ordered ? listItems(html, first, LINE_LENGTH) : null;
  if (ordered && count === null) return null;
  const prefixes = ordered ? count!.map(() => ` ${next++}. `) : [];
  const prefixWidth = ordered ? Math.max(0, ...prefixes.map((prefix) => prefix.length)) : UL_PREFIX.length;
  const texts = listItems(html, first, Math.max(20, LINE_LENGTH - prefixWidth));
  if (texts === null) return null;
  const indent = '\n' + ' '.repeat(prefixWidth);
  return texts.map((text, i) => (ordered ? prefixes[i] : UL_PREFIX).padEnd(prefixWidth) + text.replaceAll('\n', indent)).join('\n');
}

/** The texts of a list's items, each `width` wide, or null when the list is not covered. */
function listItems(html: string, first: Token, width: number): string[] | null {
  const texts: string[] = [];
  let at = first.end;
  for (;;) {
    const lt = html.indexOf('<', at);
    if (lt < 0 || !onlyAsciiWhitespace(html, at, lt)) return null;
    let token = tokenAt(html, lt);
    if (token !== null && token.kind === 'close' && token.name === first.name) return token.end === html.length ? texts : null;
    // Anything but whitespace and items directly in the list (text, a comment) is an item of its own: not covered.
    if (token === null || token.kind !== 'open' || token.name !== 'li') return null;
    for (;;) {
      const builder = new LineBuilder(width);
      const end = readInline(html, token.end, builder, first.name, false, true);
      if (end === null) return null;
      texts.push(builder.toString());
      if (end.kind === 'open') {
        token = end;
        continue;
      }
      if (end.name === 'li') {
        at = end.end;
        break;
      }
      return end.end === html.length ? texts : null;
    }
  }
}

function onlyAsciiWhitespace(html: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isWhitespace(html.charCodeAt(i))) return false;
  return true;
}

/** Text as written between two tags: decoded as htmlparser2 decodes text. */
function addSource(builder: LineBuilder, raw: string): void {
  builder.addText(raw.includes('&') ? decodeHTML(raw) : raw, true);
}

/** Elements from `depth` on are closed; a link among them ends. */
function closeTo(builder: LineBuilder, open: string[], depth: number): void {
  open.length = depth;
  if (builder.link !== null && builder.link.depth >= depth) builder.endLink();
}
