/**
 * A text part's body as nodemailer's MimeNode writes it for string content: the transfer
 * encoding it chooses, and the body in that encoding. nodemailer decides with three scans of
 * the content (isPlainText, hasLongerLines, _getTextEncoding), each run again every time
 * getTransferEncoding is asked; here each answer is asked once, and only the text that has
 * non-ASCII characters is counted (test/mail/mime-differential.test.ts proves the choice and
 * the bytes equal to the library's).
 */
import { encodeBase64Body } from './base64.js';
import { encodeQuotedPrintable, isSimpleText } from './quoted-printable.js';

export type TextTransferEncoding = '7bit' | 'quoted-printable' | 'base64';

/** hasLongerLines does not look at strings past 128 KiB: it answers "longer" for them. */
const LONG_LINE_SCAN_LIMIT = 128 * 1024;

/** What isPlainText refuses, and what _getTextEncoding counts as "non-Latin": the same set. */
const NON_PLAIN = /[\x00-\x08\x0b\x0c\x0e-\x1f\u0080-\uffff]/;
/** hasLongerLines(content, 76): a line (split at CR or LF) of 77 characters or more. */
const LONG_LINE = /^[^\r\n]{77}/m;
const LATIN_LETTER = /[A-Za-z]/;

/**
 * MimeNode.getTransferEncoding() for a text/* node with string content:
 * - 7bit when every UTF-16 unit is printable ASCII, TAB, CR or LF (isPlainText) and no line
 *   (split at CR or LF) is longer than 76 characters;
 * - otherwise quoted-printable when Latin letters outnumber the "non-Latin" units (controls
 *   other than TAB/CR/LF, and anything at or above 0x80: _getTextEncoding), else base64.
 * Plain text is told apart with regular expressions; only text with non-Latin units is counted.
 * `simple` is `isSimpleText(content)` when the caller has it: simple text is plain, one scan fewer.
 */
export function textTransferEncoding(content: string, simple = false): TextTransferEncoding {
  if (simple || !NON_PLAIN.test(content)) {
    if (content.length <= LONG_LINE_SCAN_LIMIT && !LONG_LINE.test(content)) return '7bit';
    return LATIN_LETTER.test(content) ? 'quoted-printable' : 'base64';
  }
  let nonLatin = 0;
  let latin = 0;
  for (let i = 0; i < content.length; i++) {
    const c = content.charCodeAt(i);
    if (c >= 0x80 || (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d)) nonLatin++;
    else if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) latin++;
  }
  return nonLatin < latin ? 'quoted-printable' : 'base64';
}

/**
 * The body bytes of a text part in `encoding`, line breaks as the 'win' newline writes them
 * (CRLF). `simple` is `isSimpleText(content)` when the caller has it.
 */
export function encodeTextBody(content: string, encoding: TextTransferEncoding, simple = isSimpleText(content)): string {
  if (encoding === 'base64') return encodeBase64Body(Buffer.from(content, 'utf8'));
  // 7bit is written as it is, and quoted-printable keeps CR and LF literal in text: both pass
  // through nodemailer's LeWindows transform, which makes every LF not after a CR a CRLF.
  if (simple) {
    // No CR in the text: every LF is one LeWindows makes CRLF, so they are replaced at once,
    // without a lookbehind; the quoted-printable wrap writes them so as it takes each line.
    return encoding === '7bit' ? content.replaceAll('\n', '\r\n') : encodeQuotedPrintable(content, true);
  }
  const body = encoding === '7bit' ? content : encodeQuotedPrintable(content);
  return body.includes('\n') ? body.replace(/(?<!\r)\n/g, '\r\n') : body;
}
