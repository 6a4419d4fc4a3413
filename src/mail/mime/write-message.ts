/**
 * The narrow composer: the shapes Postline sends (a text or html part; text + html as
 * multipart/alternative; either with attachments as multipart/mixed) written straight to the
 * bytes nodemailer's MailComposer + MimeNode.build() writes for the same options, in one pass,
 * without building the MIME tree. Header values keep going through the library's encoders
 * (header-fields.ts); the skeleton (which headers, in which order, which boundaries) and the
 * text bodies' transfer encoding are ours. docs/decisions/0041-narrow-mime-composer.md says why;
 * test/mail/mime-differential.test.ts proves the bytes equal over thousands of seeded messages.
 *
 * Anything else returns null and is composed by MailComposer: no body at all, a lone attachment
 * without a text part, an attachment without a filename or typed multipart/* or message/*,
 * a quoted-printable part past 64 KiB.
 */
import { detectMimeType } from 'nodemailer/lib/mime-funcs';
import { encodeBase64Body } from './base64.js';
import { attachmentTypeAndDisposition, addressField, headerField, headerKey, repeatedHeaderField, withParameters, type HeaderValue, type PreparedValue } from './header-fields.js';
import { encodeTextBody, textTransferEncoding } from './text-body.js';
import { isSimpleText, QP_MAX_BYTES } from './quoted-printable.js';

type Mailbox = { name: string; address: string };

/** A validated message (compose.ts's prepare), as MailComposer would be given it. */
export interface MessageParts {
  from: Mailbox;
  to: Mailbox[];
  cc?: Mailbox[];
  replyTo?: Mailbox[];
  subject: string | PreparedValue;
  /** Custom headers, List-Unsubscribe included, in the caller's order. */
  headers: Record<string, string | PreparedValue>;
  /** `<id@domain>`. */
  messageId: string;
  date: Date;
  text?: string;
  html?: string;
  attachments: { filename: string; content: Buffer; contentType?: string }[];
}

/** One MIME part: its header fields (folded, without line breaks) and its encoded body. */
interface Part {
  headers: string[];
  body: string;
}

/** nodemailer's multipart boundary: its prefix, the message's random base, the node's number in the tree. */
const boundaryOf = (baseBoundary: string, nodeId: number): string => `--_NmP-${baseBoundary}-Part_${nodeId}`;

function textPart(contentType: string, content: string): Part | null {
  const simple = isSimpleText(content);
  const encoding = textTransferEncoding(content, simple);
  // A UTF-16 unit is at most 3 UTF-8 bytes: most bodies need no count.
  if (encoding === 'quoted-printable' && content.length * 3 > QP_MAX_BYTES && Buffer.byteLength(content, 'utf8') > QP_MAX_BYTES) return null;
  return { headers: [`Content-Type: ${contentType}`, `Content-Transfer-Encoding: ${encoding}`], body: encodeTextBody(content, encoding, simple) };
}

function attachmentPart(a: MessageParts['attachments'][number]): Part | null {
  const contentType = a.contentType ?? detectMimeType(a.filename);
  if (!a.filename || /^(multipart|message)\//i.test(contentType)) return null;
  const { type, disposition } = attachmentTypeAndDisposition(contentType, a.filename);
  return {
    headers: [headerField('Content-Type', type)!, 'Content-Transfer-Encoding: base64', headerField('Content-Disposition', disposition)!],
    body: encodeBase64Body(a.content),
  };
}

function multipart(subtype: 'mixed' | 'alternative', boundary: string, children: Part[]): Part {
  let body = '';
  children.forEach((child, i) => {
    body += `${i > 0 ? '\r\n' : ''}--${boundary}\r\n${child.headers.join('\r\n')}\r\n\r\n${child.body}`;
  });
  body += `\r\n--${boundary}--\r\n`;
  return { headers: [headerField('Content-Type', withParameters(`multipart/${subtype}`, { boundary }))!], body };
}

/**
 * The tree MailComposer.compile() makes, as parts: nodes are numbered in creation order from
 * the root (1), and a multipart node's number names its boundary.
 */
function bodyPart(m: MessageParts, baseBoundary: string): Part | null {
  const alternatives: Part[] = [];
  for (const [type, content] of [['text/plain; charset=utf-8', m.text], ['text/html; charset=utf-8', m.html]] as const) {
    if (!content) continue; // MailComposer leaves an empty part out
    const part = textPart(type, content);
    if (!part) return null;
    alternatives.push(part);
  }
  const attachments: Part[] = [];
  for (const a of m.attachments) {
    const part = attachmentPart(a);
    if (!part) return null;
    attachments.push(part);
  }
  const mixed = attachments.length > 1 || (alternatives.length > 0 && attachments.length === 1);
  if (!mixed) {
    if (alternatives.length === 2) return multipart('alternative', boundaryOf(baseBoundary, 1), alternatives);
    return alternatives.length === 1 ? alternatives[0] : null;
  }
  const first = alternatives.length === 2 ? [multipart('alternative', boundaryOf(baseBoundary, 2), alternatives)] : alternatives;
  return multipart('mixed', boundaryOf(baseBoundary, 1), [...first, ...attachments]);
}

/**
 * The root's header block in buildHeaders' order: the custom headers (added first), then the
 * fields MailComposer sets, the part's transfer encoding, MIME-Version, and Content-Type last.
 * From, Reply-To and the custom headers repeat across the copies of a template and are encoded
 * once (repeatedHeaderField: 0.7 µs for a From instead of 4.8). The others are written each
 * time: the recipients, the message id, the date and List-Unsubscribe (the recipient's own
 * URL) change from copy to copy, and a Subject, often per recipient, is as cheap to encode as
 * to look up when it is ASCII; a look-up that misses costs more than it saves.
 */
function rootHeaders(m: MessageParts, body: Part): string[] {
  const fields: [string, HeaderValue | undefined, boolean][] = [
    ...Object.entries(m.headers).map(([name, value]): [string, HeaderValue, boolean] => [headerKey(name), value, name !== 'List-Unsubscribe']),
    ['From', m.from, true],
    ['To', m.to, false],
    ['Cc', m.cc, false],
    ['Reply-To', m.replyTo, true],
    ['Subject', m.subject || undefined, false],
    ['Message-ID', m.messageId, false],
    ['Date', m.date, false],
  ];
  const out: string[] = [];
  for (const [key, value, repeats] of fields) {
    if (value === undefined) continue;
    const field = repeats && !(value instanceof Date) ? repeatedHeaderField(key, value) : key === 'To' || key === 'Cc' ? addressField(key, value) : headerField(key, value);
    if (field !== null) out.push(field);
  }
  const [contentType, ...rest] = body.headers;
  out.push(...rest, 'MIME-Version: 1.0', contentType);
  return out;
}

/** A message as the writer leaves it before it is made bytes: the root's header fields (folded, without line breaks) and the body after the empty line. */
export interface WrittenMessage {
  headerFields: string[];
  body: string;
}

/**
 * The message as strings, or null for a shape this writer does not cover: joined (fields by
 * CRLF, an empty line, the body) and written in UTF-8, they are writeMessage's bytes. The DKIM
 * signer reads them as they are (src/mail/dkim.ts signWrittenMessage). Every line break in them
 * is CRLF: text bodies pass through LeWindows' CRLFs, base64 and multipart lines are joined by
 * CRLF, folded header lines too.
 */
export function writeMessageText(m: MessageParts, baseBoundary: string): WrittenMessage | null {
  const body = bodyPart(m, baseBoundary);
  if (!body) return null;
  let text = body.body;
  // nodemailer's LastNewline transform: the message ends with a line break (an empty body
  // leaves the message ending with the empty line after the header).
  if (text !== '' && !text.endsWith('\n')) text += text.endsWith('\r') ? '\n' : '\r\n';
  return { headerFields: rootHeaders(m, body), body: text };
}

/**
 * The message's bytes, or null for a shape this writer does not cover. `baseBoundary` is the
 * random part of the boundaries: 16 hex digits, as MimeNode draws it (crypto.randomBytes(8)).
 */
export function writeMessage(m: MessageParts, baseBoundary: string): Buffer | null {
  const written = writeMessageText(m, baseBoundary);
  return written && Buffer.from(`${written.headerFields.join('\r\n')}\r\n\r\n${written.body}`, 'utf8');
}
