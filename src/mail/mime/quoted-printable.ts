/**
 * A text body in quoted-printable, the bytes nodemailer's qp.Encoder writes when the body
 * arrives in one chunk of at most 64 KiB, written from the string itself. nodemailer encodes
 * the body's UTF-8 bytes one by one into a buffer three times their size, then places soft
 * line breaks with a substring and up to six regular expressions per output line: the larger
 * part of a message's composition cost. Here one regular expression finds the few characters
 * that need an escape (most of an HTML body is copied as it is), and `wrapQuotedPrintable`
 * makes `wrap`'s choices by looking at characters in place.
 * test/mail/mime-quoted-printable.test.ts compares both with the library over thousands of
 * bodies.
 */

/** nodemailer's line length for encoded bodies (its encoders' default). */
const LINE_LENGTH = 76;
/** How far back from a line's end `wrap` looks for a line break or a place to break. */
const MARGIN = Math.floor(LINE_LENGTH / 3);
/**
 * nodemailer's encoder works in slices of 64 KiB, told the byte that follows each; a longer
 * body is left to the library rather than imitated.
 */
export const QP_MAX_BYTES = 64 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const EQUALS = 0x3d;

const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** Where `wrap` may break a line: after a space, tab or one of `.,!?`. */
const isBreakAfter = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x2e || c === 0x2c || c === 0x21 || c === 0x3f;
/** Whether str[end-3..end) is an escape `=XX`. */
const endsWithEscape = (str: string, start: number, end: number): boolean =>
  end - start >= 3 && str.charCodeAt(end - 3) === EQUALS && isHex(str.charCodeAt(end - 2)) && isHex(str.charCodeAt(end - 1));

/**
 * nodemailer's qp `wrap(str, 76)`, step for step: each line is the next 76 characters, cut
 * after a CRLF in it, kept whole when it ends with LF, cut after an LF near its end, or cut
 * after a space or punctuation near its end; otherwise never inside an escape nor between the
 * escapes of one UTF-8 character; then ended with a soft break `=` CRLF.
 *
 * `crFree`: `str` holds no CR (simple text), so the line break to cut after is the last LF of
 * the line's end, found from an LF position kept with indexOf; and every LF is written as the
 * CRLF nodemailer's LeWindows transform makes of it as each line is taken, which spares a pass
 * over the whole body (and making the joined lines one string first) to replace them after.
 */
export function wrapQuotedPrintable(str: string, crFree = false): string {
  const len = str.length;
  let result = '';
  // CR-free text: the next LF at or after what is already in result.
  let takenLf = crFree ? str.indexOf('\n') : -1;
  const take = (from: number, to: number): void => {
    while (takenLf !== -1 && takenLf < to) {
      result += `${str.slice(from, takenLf)}\r\n`;
      from = takenLf + 1;
      takenLf = str.indexOf('\n', from);
    }
    result += str.slice(from, to);
  };
  if (len <= LINE_LENGTH) {
    take(0, len);
    return result;
  }
  let pos = 0;
  // The next CRLF at or after pos (searched again only once pos passes it).
  let nextCrlf = -2;
  // The next LF at or after pos, kept for CR-free text.
  let nextLf = -2;
  while (pos < len) {
    const end = Math.min(pos + LINE_LENGTH, len);
    if (nextCrlf !== -1 && nextCrlf < pos) nextCrlf = str.indexOf('\r\n', pos);
    if (nextCrlf !== -1 && nextCrlf + 2 <= end) {
      take(pos, nextCrlf + 2);
      pos = nextCrlf + 2;
      continue;
    }
    if (str.charCodeAt(end - 1) === LF) {
      take(pos, end);
      pos = end;
      continue;
    }
    const tailStart = Math.max(pos, end - MARGIN);
    // An LF near the end with no CR or LF after it.
    let lastBreak = -1;
    if (crFree) {
      if (nextLf !== -1 && nextLf < pos) nextLf = str.indexOf('\n', pos);
      if (nextLf !== -1 && nextLf < end) lastBreak = str.lastIndexOf('\n', end - 1);
    } else {
      lastBreak = end - 1;
      while (lastBreak >= tailStart && str.charCodeAt(lastBreak) !== LF && str.charCodeAt(lastBreak) !== CR) lastBreak--;
    }
    if (lastBreak >= tailStart && str.charCodeAt(lastBreak) === LF) {
      take(pos, lastBreak + 1);
      pos = lastBreak + 1;
      continue;
    }
    let lineEnd = end;
    let breakAfter = -1;
    if (end - pos > LINE_LENGTH - MARGIN) {
      for (let i = end - 1; i >= tailStart; i--) {
        if (isBreakAfter(str.charCodeAt(i))) {
          breakAfter = i;
          break;
        }
      }
    }
    if (breakAfter >= 0) {
      lineEnd = breakAfter + 1;
    } else if (endsInEscapeOrPartOfOne(str, pos, end)) {
      lineEnd = keepEscapesWhole(str, pos, end, len);
    }
    if (lineEnd === pos) lineEnd = end;
    if (lineEnd < len && str.charCodeAt(lineEnd - 1) !== LF) {
      if (lineEnd - pos === LINE_LENGTH) lineEnd -= endsWithEscape(str, pos, lineEnd) ? 3 : 1;
      take(pos, lineEnd);
      result += '=\r\n';
    } else {
      take(pos, lineEnd);
    }
    pos = lineEnd;
  }
  return result;
}

/** The line [start, end) ends with `=`, `=X` or `=XX` (X a hex digit). */
function endsInEscapeOrPartOfOne(str: string, start: number, end: number): boolean {
  const n = end - start;
  if (n >= 1 && str.charCodeAt(end - 1) === EQUALS) return true;
  if (n >= 2 && str.charCodeAt(end - 2) === EQUALS && isHex(str.charCodeAt(end - 1))) return true;
  return endsWithEscape(str, start, end);
}

/**
 * The end of a line that ends in an escape: an incomplete one goes to the next line, and so
 * do the escapes of a UTF-8 character whose last byte would otherwise end this line (walking
 * back over continuation bytes to the lead byte), unless the line is only escapes, 1 to 4.
 */
function keepEscapesWhole(str: string, start: number, end: number, len: number): number {
  let lineEnd = end;
  if (str.charCodeAt(lineEnd - 1) === EQUALS) lineEnd -= 1;
  else if (lineEnd - start >= 2 && str.charCodeAt(lineEnd - 2) === EQUALS && isHex(str.charCodeAt(lineEnd - 1))) lineEnd -= 2;
  while (lineEnd - start > 3 && lineEnd - start < len - start && !onlyEscapes(str, start, lineEnd) && endsWithEscape(str, start, lineEnd)) {
    const code = parseInt(str.slice(lineEnd - 2, lineEnd), 16);
    if (code < 0x80) break;
    lineEnd -= 3;
    if (code >= 0xc0) break;
  }
  return lineEnd;
}

/** [start, end) is one to four escapes and nothing else. */
function onlyEscapes(str: string, start: number, end: number): boolean {
  const n = end - start;
  if (n % 3 !== 0 || n < 3 || n > 12) return false;
  for (let i = start; i < end; i += 3) if (!endsWithEscape(str, i, i + 3)) return false;
  return true;
}

/** `=XX` for each byte value. */
const ESCAPES = Array.from({ length: 256 }, (_, b) => `=${b.toString(16).toUpperCase().padStart(2, '0')}`);

/**
 * What qp's encode leaves literal is TAB, CR, LF and printable ASCII but '='; whitespace
 * before a CR, an LF or the end is escaped too. A surrogate pair is one character (four
 * UTF-8 bytes); a lone surrogate is what Buffer.from makes of it, U+FFFD.
 */
const NEEDS_ESCAPE = /[\ud800-\udbff][\udc00-\udfff]|[^\t\n\r\x20-\x3c\x3e-\x7e]|[\t ](?=[\r\n]|$)/g;

function escapeCharacter(ch: string): string {
  let code = ch.codePointAt(0)!;
  if (code < 0x80) return ESCAPES[code];
  if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
  if (code < 0x800) return ESCAPES[0xc0 | (code >> 6)] + ESCAPES[0x80 | (code & 0x3f)];
  if (code < 0x10000) return ESCAPES[0xe0 | (code >> 12)] + ESCAPES[0x80 | ((code >> 6) & 0x3f)] + ESCAPES[0x80 | (code & 0x3f)];
  return ESCAPES[0xf0 | (code >> 18)] + ESCAPES[0x80 | ((code >> 12) & 0x3f)] + ESCAPES[0x80 | ((code >> 6) & 0x3f)] + ESCAPES[0x80 | (code & 0x3f)];
}

/** nodemailer's qp `encode` of the string's UTF-8 bytes, without wrapping. */
export function encodeQuotedPrintableText(text: string): string {
  return text.replace(NEEDS_ESCAPE, escapeCharacter);
}

/**
 * encodeQuotedPrintableText for simple text (`isSimpleText`: LF and printable ASCII only), with
 * native searches instead of a regular expression replacement with a callback per match: the
 * only characters such text can need escaped are '=' and a space before an LF or at the end.
 * '=' goes first, so the escapes written for spaces are not escaped again.
 */
export function encodeSimpleQuotedPrintableText(text: string): string {
  let out = text.includes('=') ? text.replaceAll('=', '=3D') : text;
  if (hasSpaceBeforeLf(out)) out = out.replace(SPACE_BEFORE_LF, '=20');
  if (out.endsWith(' ')) out = `${out.slice(0, -1)}=20`;
  return out;
}
const SPACE_BEFORE_LF = / (?=\n)/g;

/**
 * `text.includes(' \n')`, by visiting the line breaks: a search for a pattern that starts with
 * a space stops at every word of a text, a search for LF at every line (~1.4 µs against ~5.5
 * for a 3.6 KB text part, ~0.3 against ~4.8 for a one-line HTML part).
 */
function hasSpaceBeforeLf(text: string): boolean {
  for (let lf = text.indexOf('\n'); lf !== -1; lf = text.indexOf('\n', lf + 1)) {
    if (lf > 0 && text.charCodeAt(lf - 1) === 0x20) return true;
  }
  return false;
}

/** Only LF and printable ASCII: no CR, TAB, control or non-ASCII unit. */
const NOT_SIMPLE = /[^\n\x20-\x7e]/;

/**
 * Text that is only LF and printable ASCII, the usual HTML and derived text part of a
 * per-recipient copy: its escaping needs no regular expression (encodeSimpleQuotedPrintableText),
 * and, holding no CR, its line breaks can all be made CRLF at once (text-body.ts).
 */
export const isSimpleText = (text: string): boolean => !NOT_SIMPLE.test(text);

/**
 * The body encoded and soft-wrapped. The whitespace that ends it is held back and encoded
 * after the rest, as the stream encoder does (it ends the input, so its last character is
 * encoded), and wrapping goes on from the last unfinished line.
 *
 * `simple` (the caller found `isSimpleText(body)`): escaped without the regular expression, and
 * wrapped as CR-free text, every line break written as CRLF.
 */
export function encodeQuotedPrintable(body: string, simple = false): string {
  const escape = simple ? encodeSimpleQuotedPrintableText : encodeQuotedPrintableText;
  let end = body.length;
  while (end > 0 && (body.charCodeAt(end - 1) === 0x20 || body.charCodeAt(end - 1) === 0x09)) end--;
  if (end === body.length) return wrapQuotedPrintable(escape(body), simple);
  const first = end > 0 ? wrapQuotedPrintable(escape(body.slice(0, end)), simple) : '';
  const lastLf = first.lastIndexOf('\n');
  return first.slice(0, lastLf + 1) + wrapQuotedPrintable(first.slice(lastLf + 1) + escape(body.slice(end)), simple);
}
