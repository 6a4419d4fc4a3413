/**
 * A text body in quoted-printable, as nodemailer's qp.Encoder writes it when the body arrives
 * in one chunk of at most 64 KiB: the whitespace that ends the body is held back and encoded
 * after the rest (it ends the input, so its last character is encoded), each part soft-wrapped
 * on from the last unfinished line.
 */
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';

/** nodemailer's line length for encoded bodies (its encoders' default). */
const LINE_LENGTH = 76;
/**
 * nodemailer's encoder works in slices of 64 KiB, told the byte that follows each; a longer
 * body is left to the library rather than imitated.
 */
export const QP_MAX_BYTES = 64 * 1024;

export function encodeQuotedPrintable(body: Buffer): string {
  let end = body.length;
  while (end > 0 && (body[end - 1] === 0x20 || body[end - 1] === 0x09)) end--;
  let out = '';
  let line = '';
  for (const part of [body.subarray(0, end), body.subarray(end)]) {
    if (part.length === 0) continue;
    const wrapped = qpWrap(line + qpEncode(part), LINE_LENGTH);
    const lastLf = wrapped.lastIndexOf('\n');
    out += wrapped.slice(0, lastLf + 1);
    line = wrapped.slice(lastLf + 1);
  }
  return out + line;
}
