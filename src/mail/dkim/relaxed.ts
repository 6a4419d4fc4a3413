/**
 * Relaxed/relaxed canonicalisation (RFC 6376 §3.4.2, §3.4.4) of a whole message buffer, the
 * way mailauth's signer reads it, so a signature made here is byte-identical to mailauth's
 * (test/mail/dkim-differential.test.ts proves it over a generated corpus). Where the RFC leaves
 * a case open or mailauth reads it its own way, mailauth's reading is the one kept
 * (docs/decisions/0038-dkim-narrow-signer.md lists them):
 * - a lone LF is read as CRLF, in the header block and in the body; a lone CR stays a byte;
 * - header whitespace is what a JavaScript `\s` matches on the bytes read as Latin-1 (so a lone
 *   CR, VT, FF and the byte 0xA0 count as whitespace, not only SP and HTAB);
 * - a body line is rewritten only when it holds a tab, two spaces in a row, or a space before
 *   its CRLF; the last line, when it has no line break, only for a tab or two spaces.
 */
import { createHash } from 'node:crypto';

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const TAB = 0x09;
const CRLF = Buffer.from('\r\n', 'latin1');

export interface SplitMessage {
  /** The header block as Latin-1 text (one char per byte), without the blank line. */
  headerText: string;
  /** The body bytes after the blank line (lone LFs already read as CRLF). */
  body: Buffer;
}

/** Every LF not preceded by CR becomes CRLF; the buffer itself when there is none. */
function withCrlfLineBreaks(raw: Buffer): Buffer {
  let lf = raw.indexOf(LF);
  while (lf !== -1 && lf > 0 && raw[lf - 1] === CR) lf = raw.indexOf(LF, lf + 1);
  if (lf === -1) return raw;
  const out = Buffer.allocUnsafe(raw.length * 2);
  let written = raw.copy(out, 0, 0, lf);
  for (let i = lf; i < raw.length; i++) {
    const byte = raw[i];
    if (byte === LF && (i === 0 || raw[i - 1] !== CR)) out[written++] = CR;
    out[written++] = byte;
  }
  return out.subarray(0, written);
}

/** Splits at the first empty line; null when the message has none (nothing can be signed). */
export function splitMessage(raw: Buffer): SplitMessage | null {
  const message = withCrlfLineBreaks(raw);
  const end = message.indexOf('\n\r\n', 0, 'latin1');
  if (end === -1) return null;
  return { headerText: message.toString('latin1', 0, end + 1), body: message.subarray(end + 3) };
}

export interface HeaderField {
  /** The name as written, trimmed (goes into h=). */
  name: string;
  /** The whole field, folded lines joined by CRLF, as Latin-1 text. */
  text: string;
}

const headerField = (text: string): HeaderField => ({ name: /^[^:]+/.exec(text)?.[0].trim() ?? '', text });

/** Header fields in message order; a line starting with whitespace continues the one above. */
export function parseHeaderFields(headerText: string): HeaderField[] {
  const lines = headerText.replace(/[\r\n]+$/, '').split(/\r?\n/);
  const fields: HeaderField[] = [];
  let current: string[] | null = null;
  const close = () => {
    if (!current) return;
    fields.push(headerField(current.join('\r\n')));
  };
  for (let i = 0; i < lines.length; i++) {
    if (i > 0 && /^\s/.test(lines[i]) && current) {
      current.push(lines[i]);
      continue;
    }
    close();
    current = [lines[i]];
  }
  close();
  return fields;
}

/**
 * The fields to sign: every field whose name is in `headerList`, bottom-up, repeated names
 * included (a verifier reading h= bottom-up then finds each instance).
 */
export function selectSignedFields(fields: HeaderField[], headerList: readonly string[]): HeaderField[] {
  const wanted = new Set(headerList.map((name) => name.trim().toLowerCase()).filter((name) => name));
  const selected: HeaderField[] = [];
  for (let i = fields.length - 1; i >= 0; i--) {
    if (fields[i].name && wanted.has(fields[i].name.toLowerCase())) selected.push(fields[i]);
  }
  return selected;
}

/** Relaxed header canonicalisation of one field (Latin-1 text), without the trailing CRLF. */
export function relaxedHeader(text: string): string {
  return text
    .replace(/\r?\n/g, '')
    .replace(/^([^:]*):\s*/, (_whole, name: string) => `${name.toLowerCase().trim()}:`)
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * relaxedHeader for a field of writtenHeaderFields (ASCII, every line break a CRLF): when the
 * unfolded field has no whitespace but single spaces and none before its colon, the relaxed
 * form is the name in lower case, the colon, and the value without the space that starts or
 * ends it. Anything else goes through relaxedHeader.
 */
export function relaxedWrittenHeader(text: string): string {
  const line = text.includes('\n') ? text.replaceAll('\r\n', '') : text;
  const colon = line.indexOf(':');
  if (colon <= 0 || NOT_SINGLE_SPACES.test(line) || line.lastIndexOf(' ', colon) !== -1) return relaxedHeader(text);
  const start = line.charCodeAt(colon + 1) === SP ? colon + 2 : colon + 1;
  const end = line.length > start && line.charCodeAt(line.length - 1) === SP ? line.length - 1 : line.length;
  return `${line.slice(0, colon).toLowerCase()}:${line.slice(start, end)}`;
}
/** Whitespace other than a space (what `\s` matches in Latin-1 text), or two spaces. */
const NOT_SINGLE_SPACES = /[^\S ]|  /;

/**
 * SHA-256 of the relaxed-canonicalised body, in one pass: most composed bodies hold no tab, no
 * double space and no space before a line break, and are hashed as they are.
 */
export function relaxedBodyHash(body: Buffer): Buffer {
  const needsRewrite = body.indexOf(TAB) !== -1 || body.indexOf('  ', 0, 'latin1') !== -1 || body.indexOf(' \r\n', 0, 'latin1') !== -1;
  const canonical = needsRewrite ? rewriteLines(body) : body;
  // Empty lines at the end are ignored; a non-empty body ends with exactly one CRLF.
  let end = canonical.length;
  while (end > 0 && (canonical[end - 1] === LF || canonical[end - 1] === CR)) end--;
  const hash = createHash('sha256');
  if (end > 0) hash.update(canonical.subarray(0, end)).update(CRLF);
  return hash.digest();
}

/** Rewrites the lines that need it: whitespace runs to one SP, none at the end of a line. */
function rewriteLines(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(body.length);
  let written = 0;
  let start = 0;
  while (start < body.length) {
    const lf = body.indexOf(LF, start);
    const end = lf === -1 ? body.length : lf + 1;
    if (lineNeedsRewrite(body, start, end, lf !== -1)) written = rewriteLine(body, start, end, out, written);
    else written += body.copy(out, written, start, end);
    start = end;
  }
  return out.subarray(0, written);
}

function lineNeedsRewrite(body: Buffer, start: number, end: number, endsWithLf: boolean): boolean {
  if (endsWithLf && end - start >= 3 && body[end - 2] === CR && body[end - 3] === SP) return true;
  for (let i = start; i < end; i++) {
    if (body[i] === TAB || (body[i] === SP && i > start && body[i - 1] === SP)) return true;
  }
  return false;
}

/**
 * One line: the bytes other than SP, HTAB, CR and LF keep their order; whitespace between two
 * of them becomes one SP written right after the first (before any lone CR that sat between
 * them); whitespace before the first of them becomes one SP; whitespace after the last is
 * dropped. CRs and the final LF are kept.
 */
function rewriteLine(body: Buffer, start: number, end: number, out: Buffer, written: number): number {
  let pendingSpace = false;
  let pendingCr = 0;
  for (let i = start; i < end; i++) {
    const byte = body[i];
    if (byte === SP || byte === TAB) {
      pendingSpace = true;
    } else if (byte === CR) {
      pendingCr++;
    } else if (byte === LF) {
      break;
    } else {
      if (pendingSpace) out[written++] = SP;
      for (; pendingCr > 0; pendingCr--) out[written++] = CR;
      pendingSpace = false;
      out[written++] = byte;
    }
  }
  for (; pendingCr > 0; pendingCr--) out[written++] = CR;
  if (end > start && body[end - 1] === LF) out[written++] = LF;
  return written;
}

/**
 * The header fields of a message handed over as written (src/mail/mime/write-message.ts's
 * fields, folded, each line after the first starting with whitespace), read as
 * parseHeaderFields reads the header block they make when joined by CRLF and written in UTF-8:
 * a field of one line is taken as it is, a folded one is parsed on its own, and a field with a
 * non-ASCII character (an 8-bit address, SMTPUTF8) is read as the Latin-1 text of its UTF-8
 * bytes, as the block is. Null when the block would not be read field by field (a lone CR or
 * LF, a field that starts with whitespace or holds an empty line): the caller then signs the
 * message's bytes.
 */
export function writtenHeaderFields(written: readonly string[]): HeaderField[] | null {
  const fields: HeaderField[] = [];
  for (let text of written) {
    if (text === '' || NOT_ONE_FIELD.test(text)) return null;
    if (NON_ASCII.test(text)) text = Buffer.from(text, 'utf8').toString('latin1');
    if (!text.includes('\n')) fields.push(headerField(text));
    else for (const field of parseHeaderFields(text)) fields.push(field);
  }
  return fields;
}
/** A lone CR or LF, a line that starts with whitespace, or an empty line. */
const NOT_ONE_FIELD = /^\s|\r(?!\n)|(?<!\r)\n|\n(?:\r|$)/;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Two spaces. Written with a quantifier, V8 finds it in ~3.5 µs in an 8 KB body; `includes('  ')`
 * and the literal expression stop at every space (~9 µs).
 */
const TWO_SPACES = / {2}/;

/**
 * relaxedBodyHash of the bytes `body` (a string) is in UTF-8, hashed without making them a
 * buffer first; null when the body has a lone LF (the message's bytes would read it as CRLF:
 * the caller then hashes those).
 */
export function relaxedBodyHashOfText(body: string): Buffer | null {
  // What decides a rewrite (a tab, two spaces, a space before CRLF) is ASCII, found in the
  // string as in its bytes; the space before a CRLF while visiting the line breaks.
  let spaceBeforeCrlf = false;
  for (let lf = body.indexOf('\n'); lf !== -1; lf = body.indexOf('\n', lf + 1)) {
    if (lf === 0 || body.charCodeAt(lf - 1) !== CR) return null;
    if (lf >= 2 && body.charCodeAt(lf - 2) === SP) spaceBeforeCrlf = true;
  }
  if (spaceBeforeCrlf || body.includes('\t') || TWO_SPACES.test(body)) return relaxedBodyHash(Buffer.from(body, 'utf8'));
  let end = body.length;
  while (end > 0 && (body.charCodeAt(end - 1) === LF || body.charCodeAt(end - 1) === CR)) end--;
  const hash = createHash('sha256');
  if (end > 0) hash.update(end === body.length ? body : body.slice(0, end), 'utf8').update(CRLF);
  return hash.digest();
}
