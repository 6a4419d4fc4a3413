/**
 * The text of a document whose body is a tree of blocks — leaves (`<p>`, `<h1>`…`<h6>`, a
 * `<div>` or layout `<table>` of inline content, a `<ul>`/`<ol>` of inline items) inside
 * containers (`<div>`, `<table>` of blocks) — put together from the text of each leaf on its own.
 *
 * html-to-text turns each such leaf into text independently of its neighbours (a block
 * starts a fresh line builder, 78 columns wide, and holds no other block) and joins the
 * blocks' texts with max(previous block's trailing, this block's leading) line breaks, an
 * empty text adding none. So a document's copies that differ in a few blocks (a campaign's
 * merge fields, a template's variables) need only those blocks converted; the rest are the
 * same strings as in the previous copy, and their texts are kept (./index.ts).
 *
 * Covered, read with htmlparser2's tokenizer rules: anything before one `<body>`; in the body,
 * whitespace, plain `<!-- -->` comments, `<script>`/`<style>` (which html-to-text skips), and
 * those blocks, each closed explicitly, leaves holding text and inline elements only (INLINE;
 * in a list, its items), containers holding blocks only; then `</body>`. Anything else returns
 * null and the whole document goes to html-to-text: text or `<br>` beside blocks, nested
 * lists or blocks in an item, stray close tags (a stray `</p>` makes an empty paragraph),
 * other markup declarations, foreign content, raw-text elements other than script and style,
 * a document without `<body>` or with two.
 * test/mail/html-text-differential.test.ts proves it equal to html-to-text; decisions 0042, 0045.
 */
import { BANG, DQUOTE, endsName, EQ, GT, isAsciiAlpha, isWhitespace, SLASH, SQUOTE } from '../html-chars.js';

/** Line breaks before and after each block: html-to-text's defaults for these formatters (a table not marked as data is a block). */
const BLOCK_BREAKS = new Map<string, readonly [leading: number, trailing: number]>([
  ['p', [2, 2]],
  ['h1', [3, 2]],
  ['h2', [3, 2]],
  ['h3', [3, 2]],
  ['h4', [2, 2]],
  ['h5', [2, 2]],
  ['h6', [2, 2]],
  ['div', [1, 1]],
  ['table', [2, 2]],
  // A list's own leading 2 is replaced by its first item's 1 when html-to-text adds the item.
  ['ul', [1, 2]],
  ['ol', [1, 2]],
]);
/** Blocks that may hold other blocks (else only inline content, like p and the headings). */
const CONTAINERS = new Set(['div', 'table']);
/**
 * Lists of inline items: leaves converted whole (html-to-text numbers and indents the items);
 * one at the top of a container has the same text there as alone (78 columns, not nested).
 */
const LISTS = new Set(['ul', 'ol']);

/**
 * Elements html-to-text formats inline (or, for a, br, img and wbr, within the line) and that
 * no open tag implicitly closes in htmlparser2.
 */
export const INLINE = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'big', 'br', 'cite', 'code', 'del', 'dfn', 'em', 'font', 'i', 'img', 'ins', 'kbd',
  'mark', 'q', 's', 'samp', 'small', 'span', 'strike', 'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var', 'wbr',
]);
const VOID = new Set(['br', 'img', 'wbr']);

/**
 * Layout elements html-to-text walks through as if they were not there (formatted inline),
 * with the open elements each one implicitly closes in htmlparser2.
 */
export const WRAPPERS = new Map<string, ReadonlySet<string>>([
  ['center', new Set()],
  ['tbody', new Set(['thead', 'tbody'])],
  ['tfoot', new Set(['thead', 'tbody'])],
  ['thead', new Set()],
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
]);

/** Elements whose content htmlparser2 reads as raw text and html-to-text skips. */
export const SKIPPED_RAW_TEXT = new Set(['script', 'style']);
/** Raw-text elements before the body (whose content alone html-to-text reads), title among them. */
const HEAD_RAW_TEXT = new Set(['script', 'style', 'title']);

/** Constructs this reader leaves to the parser: foreign content, other raw-text elements, the tokenizer's folded characters. */
const UNCOVERED = /<(?:svg|math|plaintext|xmp|iframe|noembed|noframes|textarea)|[\x0f\x1c]/i;
const BODY_OPEN = /<body/gi;


/** One piece of markup at a "<". */
export interface Token {
  kind: 'open' | 'close' | 'comment' | 'doctype';
  /** Lower-case tag name (open/close). */
  name: string;
  /** Offset just past the token. */
  end: number;
}

export class Uncovered extends Error {}

/**
 * The markup at `lt` (a "<"), or null when that "<" is text. Throws Uncovered for anything
 * outside the covered subset, including a document that ends inside it.
 */
export function tokenAt(html: string, lt: number): Token | null {
  const n = html.length;
  const c = html.charCodeAt(lt + 1);
  if (isAsciiAlpha(c)) {
    let p = lt + 2;
    while (p < n && !endsName(html.charCodeAt(p))) p++;
    const name = html.slice(lt + 1, p).toLowerCase();
    return { kind: 'open', name, end: pastOpenTag(html, p) };
  }
  if (c === SLASH) {
    if (!isAsciiAlpha(html.charCodeAt(lt + 2))) throw new Uncovered();
    let p = lt + 3;
    while (p < n && !endsName(html.charCodeAt(p))) p++;
    const gt = html.indexOf('>', p);
    if (gt < 0) throw new Uncovered();
    return { kind: 'close', name: html.slice(lt + 2, p).toLowerCase(), end: gt + 1 };
  }
  if (c === BANG) {
    if (html.startsWith('--', lt + 2)) {
      // A plain comment: not `<!-->` or `<!--->`, ended by the first `-->`, no `--!>` in it.
      const body = lt + 4;
      const close = html.indexOf('-->', body);
      if (close < 0 || html.charCodeAt(body) === GT || html.startsWith('->', body) || html.slice(body, close).includes('--!')) throw new Uncovered();
      return { kind: 'comment', name: '', end: close + 3 };
    }
    if (html.slice(lt + 2, lt + 9).toLowerCase() === 'doctype') {
      const gt = html.indexOf('>', lt + 9);
      if (gt < 0) throw new Uncovered();
      return { kind: 'doctype', name: '', end: gt + 1 };
    }
    throw new Uncovered();
  }
  if (c === 63 /* ? */ || Number.isNaN(c)) throw new Uncovered();
  return null;
}

/** Past an open tag's ">", its attributes read as the tokenizer does (a quoted value may hold ">"). */
export function pastOpenTag(html: string, from: number): number {
  const n = html.length;
  let p = from;
  for (;;) {
    if (p >= n) throw new Uncovered();
    let c = html.charCodeAt(p);
    if (c === GT) return p + 1;
    if (c === SLASH || isWhitespace(c)) {
      p++;
      continue;
    }
    p++;
    while (p < n && (c = html.charCodeAt(p)) !== EQ && !endsName(c)) p++;
    while (p < n && isWhitespace(html.charCodeAt(p))) p++;
    if (p >= n) throw new Uncovered();
    if (html.charCodeAt(p) !== EQ) continue;
    p++;
    while (p < n && isWhitespace(html.charCodeAt(p))) p++;
    if (p >= n) throw new Uncovered();
    c = html.charCodeAt(p);
    if (c === DQUOTE || c === SQUOTE) {
      const close = html.indexOf(c === DQUOTE ? '"' : "'", p + 1);
      if (close < 0) throw new Uncovered();
      p = close + 1;
    } else {
      while (p < n && !isWhitespace((c = html.charCodeAt(p))) && c !== GT) p++;
    }
  }
}

/** Past a raw-text element's content and its close tag `</name` (any case, then whitespace, "/" or ">"). */
export function pastRawText(html: string, from: number, name: string): number {
  const n = html.length;
  let at = from;
  for (;;) {
    const lt = html.indexOf('</', at);
    const end = lt + 2 + name.length;
    if (lt < 0 || end >= n) throw new Uncovered();
    if (html.slice(lt + 2, end).toLowerCase() === name && endsName(html.charCodeAt(end))) {
      const gt = html.indexOf('>', end);
      if (gt < 0) throw new Uncovered();
      return gt + 1;
    }
    at = lt + 1;
  }
}

function onlyWhitespace(html: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isWhitespace(html.charCodeAt(i))) return false;
  return true;
}

/**
 * Past the body's open tag. What comes before it is not read; an element left open there holds
 * the body, which changes nothing here: a close tag in the body that no element opened in the
 * body ends is not covered (readContent).
 */
function pastBodyOpen(html: string): number {
  let at = 0;
  for (;;) {
    const lt = html.indexOf('<', at);
    if (lt < 0) throw new Uncovered();
    if (html.charCodeAt(lt + 1) === 63 /* ? */) {
      // An XML declaration (`<?xml …?>`): up to the first ">".
      const gt = html.indexOf('>', lt + 2);
      if (gt < 0) throw new Uncovered();
      at = gt + 1;
      continue;
    }
    const token = tokenAt(html, lt);
    if (token === null) {
      at = lt + 1;
      continue;
    }
    if (token.kind === 'open' && token.name === 'body') return token.end;
    at = token.kind === 'open' && HEAD_RAW_TEXT.has(token.name) ? pastRawText(html, token.end, token.name) : token.end;
  }
}

/** A block whose content is inline: html-to-text converts its source on its own to the same text. */
export interface Leaf {
  source: string;
  leading: number;
  trailing: number;
  /** A list with no items adds nothing, not even line breaks. */
  list: boolean;
  /** Its place among the document's leaves (and their texts). */
  index: number;
  /** Offset of its open tag in the document. */
  start: number;
  /** Lower-case tag name. */
  name: string;
}

/** A block of blocks; its text is its children's, put together. */
export interface Container {
  children: Block[];
  leading: number;
  trailing: number;
}

export type Block = Leaf | Container;

/**
 * Reads an element's content, from past its open tag to past its close tag (`name`), adding
 * its child blocks to `children` (and their leaves to `leaves`, in document order). Inline
 * content and child blocks are reported, not judged: a container with both is the caller's to
 * refuse. Every element opened inside is tracked (with htmlparser2's implied closes for the
 * table wrappers) so that a close tag is known to end an element of this content: one that
 * would close something outside it is not covered.
 */
function readContent(html: string, from: number, name: string, children: Block[], leaves: Leaf[]): { end: number; inline: boolean; blocks: boolean } {
  const container = name === 'body' || CONTAINERS.has(name);
  const list = LISTS.has(name);
  const open: string[] = [];
  let inline = false;
  let blocks = false;
  let at = from;
  for (;;) {
    const lt = html.indexOf('<', at);
    if (lt < 0) throw new Uncovered();
    if (!inline && !onlyWhitespace(html, at, lt)) inline = true;
    const token = tokenAt(html, lt);
    if (token === null) {
      inline = true;
      at = lt + 1;
      continue;
    }
    at = token.end;
    if (token.kind === 'comment') continue;
    if (token.kind === 'doctype') throw new Uncovered();
    if (token.kind === 'close') {
      const nearest = open.lastIndexOf(token.name);
      if (nearest >= 0) open.length = nearest;
      else if (token.name === name) return { end: token.end, inline, blocks };
      // A stray </br> is a line break in htmlparser2.
      else if (token.name === 'br') inline = true;
      else throw new Uncovered();
      continue;
    }
    const tag = token.name;
    if (SKIPPED_RAW_TEXT.has(tag)) {
      at = pastRawText(html, token.end, tag);
    } else if (INLINE.has(tag)) {
      inline = true;
      if (!VOID.has(tag)) open.push(tag);
    } else if (list && tag === 'li') {
      // An item closes the item before it when that is the open element, as in htmlparser2.
      while (open.length > 0 && open[open.length - 1] === 'li') open.pop();
      open.push(tag);
    } else if (container && WRAPPERS.has(tag)) {
      const closes = WRAPPERS.get(tag)!;
      while (open.length > 0 && closes.has(open[open.length - 1])) open.pop();
      open.push(tag);
    } else if (container && BLOCK_BREAKS.has(tag)) {
      blocks = true;
      at = readBlock(html, lt, token.end, tag, children, leaves);
    } else {
      throw new Uncovered();
    }
  }
}

/** One block from its open tag: a leaf if its content is inline, else a container of blocks. */
export function readBlock(html: string, start: number, contentStart: number, name: string, siblings: Block[], leaves: Leaf[]): number {
  const [leading, trailing] = BLOCK_BREAKS.get(name)!;
  const children: Block[] = [];
  const { end, inline, blocks } = readContent(html, contentStart, name, children, leaves);
  if (inline && blocks) throw new Uncovered();
  if (blocks) siblings.push({ children, leading, trailing });
  else {
    const leaf = { source: html.slice(start, end), leading, trailing, list: LISTS.has(name), index: leaves.length, start, name };
    siblings.push(leaf);
    leaves.push(leaf);
  }
  return end;
}

/** A block's text as html-to-text keeps it while converting: what its parent gets from it. */
class Holder {
  text = '';
  stashedLineBreaks = 0;
  constructor(public leadingLineBreaks: number) {}

  /** html-to-text's addText: line breaks only between texts, the larger of the two sides'. */
  add(text: string, leading: number, trailing: number): void {
    const lineBreaks = Math.max(this.stashedLineBreaks, leading);
    if (this.text) this.text = this.text + '\n'.repeat(lineBreaks) + text;
    else {
      this.text = text;
      this.leadingLineBreaks = lineBreaks;
    }
    this.stashedLineBreaks = trailing;
  }
}

function putTogether(blocks: readonly Block[], holder: Holder, texts: readonly string[]): void {
  for (const block of blocks) {
    if ('source' in block) {
      const text = texts[block.index];
      if (text || !block.list) holder.add(text, block.leading, block.trailing);
    }
    else {
      const inner = new Holder(block.leading);
      putTogether(block.children, inner, texts);
      holder.add(inner.text, inner.leadingLineBreaks, Math.max(inner.stashedLineBreaks, block.trailing));
    }
  }
}

/** A covered document's blocks: the tree under the body and its leaves in document order. */
export interface ReadDocument {
  body: Block[];
  leaves: Leaf[];
}

/**
 * The checks the block reader leaves to regular expressions, over a leaf read again in a copy
 * of a covered document (./copies.ts): nothing covered there anywhere, no body open tag. The
 * rest of the copy is the same strings the whole-document checks passed in the earlier
 * document, and no match crosses a leaf's edge: a match starts with "<" and goes on with
 * letters, and a leaf starts with the "<" of its own (block) element and ends with ">".
 */
export function leafPassesDocumentChecks(source: string): boolean {
  if (UNCOVERED.test(source)) return false;
  BODY_OPEN.lastIndex = 0;
  return !BODY_OPEN.test(source);
}

/** The document's blocks, or null when the document is not covered. */
export function readDocument(html: string): ReadDocument | null {
  if (UNCOVERED.test(html)) return null;
  const body: Block[] = [];
  const leaves: Leaf[] = [];
  try {
    const at = pastBodyOpen(html);
    BODY_OPEN.lastIndex = at;
    if (BODY_OPEN.test(html)) return null;
    if (readContent(html, at, 'body', body, leaves).inline) return null;
  } catch (e) {
    if (e instanceof Uncovered) return null;
    throw e;
  }
  return { body, leaves };
}

/** The text of a read document from its leaves' texts (by leaf index). */
export function documentText(body: readonly Block[], texts: readonly string[]): string {
  const root = new Holder(0);
  putTogether(body, root, texts);
  return root.text;
}

/**
 * The document's text from its leaf blocks' texts, or null when the document is not covered.
 * `convertLeaves` is given every leaf block, in document order, and returns the text each
 * converts to on its own.
 */
export function blockwiseText(html: string, convertLeaves: (leaves: readonly Leaf[]) => string[]): string | null {
  const read = readDocument(html);
  return read && documentText(read.body, convertLeaves(read.leaves));
}
