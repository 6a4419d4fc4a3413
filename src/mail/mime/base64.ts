/**
 * Base64 bodies as nodemailer writes them: the bytes encoded by Buffer's base64, in lines of
 * 76 characters joined by CRLF, no line break after the last. nodemailer's `wrap` inserts the
 * line breaks with a regular expression replacement per 76 KiB chunk, which was most of an
 * attachment's cost (about 6 µs per KB); cutting the string at fixed offsets gives the same
 * lines (test/mail/mime-base64.test.ts compares both over every length from 0 to 2,000 bytes).
 */
const LINE_LENGTH = 76;

export function encodeBase64Body(content: Buffer): string {
  const encoded = content.toString('base64');
  if (encoded.length <= LINE_LENGTH) return encoded;
  const lines: string[] = [];
  for (let i = 0; i < encoded.length; i += LINE_LENGTH) lines.push(encoded.slice(i, i + LINE_LENGTH));
  return lines.join('\r\n');
}
