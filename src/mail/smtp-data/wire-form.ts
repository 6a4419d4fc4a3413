/**
 * A message's DATA in the form it crosses the wire (RFC 5321 4.5.2): a dot at the start of a
 * line doubled, every line ending CRLF, and the end-of-data line `.` after it — the same bytes
 * nodemailer's DataStream writes for the same input, byte for byte, bare CR and bare LF
 * included (docs/decisions/0044-smtp-data-in-wire-form.md; proven by
 * test/mail/smtp-data-differential.test.ts).
 *
 * DataStream looks at every byte in a JavaScript loop; this jumps from line end to line end
 * with indexOf, the message Postline builds having CRLF line ends only, and looks at the bytes
 * around each. The search runs over a latin1 view of the bytes (one character per byte, same
 * offsets): String.prototype.indexOf is a V8 builtin, several times cheaper per call than
 * Buffer.prototype.indexOf's way into C++. The rules, each with the byte before it (none at
 * the start of the message):
 * - a CR not followed by LF gets an LF after it, so a receiver treating a lone CR as a line end
 *   never sees `\r.\r` as the end of the data; a dot after it is doubled like any other;
 * - an LF without a CR before it gets one;
 * - a dot at the start of a line (or of the message) is doubled;
 * - the terminator completes the last line: `.\r\n` after an LF, `\n.\r\n` after a CR,
 *   `\r\n.\r\n` otherwise (an empty message too).
 *
 * Self-contained on purpose: the differential test mutates a copy of this file.
 */

const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;

const STUFFED_DOT = Buffer.from('.');
const CR_BEFORE_LF = Buffer.from('\r');
const LF_AFTER_CR = Buffer.from('\n');
const LF_AFTER_CR_STUFFED_DOT = Buffer.from('\n.');
const END_AFTER_LF = Buffer.from('.\r\n');
const END_AFTER_CR = Buffer.from('\n.\r\n');
const END_AFTER_TEXT = Buffer.from('\r\n.\r\n');

/** `raw` dot-stuffed, CRLF-normalised and terminated: what goes on the wire after DATA's 354. */
export function toDataWire(raw: Buffer): Buffer {
  const n = raw.length;
  const pieces: Buffer[] = [];
  let size = 0;
  // raw[0, copied) is in pieces already
  let copied = 0;
  const insertAt = (at: number, bytes: Buffer): void => {
    if (at > copied) {
      pieces.push(raw.subarray(copied, at));
      size += at - copied;
      copied = at;
    }
    pieces.push(bytes);
    size += bytes.length;
  };
  if (n > 0 && raw[0] === DOT) insertAt(0, STUFFED_DOT);
  const text = raw.toString('latin1');
  let cr = text.indexOf('\r');
  let lf = text.indexOf('\n');
  while (cr !== -1 || lf !== -1) {
    if (cr !== -1 && (lf === -1 || cr < lf)) {
      const next = cr + 1;
      if (next < n && raw[next] === LF) {
        // CRLF, the usual line end: only a dot starting the next line needs anything
        const lineStart = next + 1;
        if (lineStart < n && raw[lineStart] === DOT) insertAt(lineStart, STUFFED_DOT);
        cr = text.indexOf('\r', lineStart);
        lf = text.indexOf('\n', lineStart);
      } else {
        // a bare CR (at the very end the terminator completes it)
        if (next < n) insertAt(next, raw[next] === DOT ? LF_AFTER_CR_STUFFED_DOT : LF_AFTER_CR);
        cr = text.indexOf('\r', next);
      }
    } else {
      // a bare LF: an LF after a CR was taken with it above
      insertAt(lf, CR_BEFORE_LF);
      const lineStart = lf + 1;
      if (lineStart < n && raw[lineStart] === DOT) insertAt(lineStart, STUFFED_DOT);
      lf = text.indexOf('\n', lineStart);
    }
  }
  const last = n > 0 ? raw[n - 1] : -1;
  const end = last === LF ? END_AFTER_LF : last === CR ? END_AFTER_CR : END_AFTER_TEXT;
  if (pieces.length === 0) return Buffer.concat([raw, end], n + end.length);
  pieces.push(raw.subarray(copied), end);
  return Buffer.concat(pieces, size + (n - copied) + end.length);
}
