/**
 * Builds the raw RFC 5322 message once: the bytes nodemailer's MailComposer writes for it,
 * written by the narrow writer of src/mail/mime/ (or by MailComposer itself for a shape that
 * writer does not cover). The bytes returned here are what gets signed and sent; nothing
 * parses them again.
 *
 * Header safety: every value that ends up in a header (subject, display names, addresses,
 * custom header names and values, attachment filenames and types, unsubscribe URLs) is
 * checked for CR/LF and other control characters and refused with a ComposeError
 * (`validation_failed`, 422 at the API) rather than cleaned: a header injection never
 * passes, and the caller learns which field was wrong.
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import { encodeWord } from 'nodemailer/lib/mime-funcs';
import { AppError } from '../errors.js';
import { randomBytes } from 'node:crypto';
import { buildMimeSync, type MimeTreeNode } from './mime-build.js';
import { writeMessage, writeMessageText, type MessageParts, type WrittenMessage } from './mime/write-message.js';
import { htmlToText } from './html-text/index.js';

export type Mailbox = string | { email: string; name?: string };

export interface ComposeAttachment {
  filename: string;
  content: Buffer;
  contentType?: string;
}

export interface ComposeInput {
  from: { email: string; name?: string };
  to: Mailbox | Mailbox[];
  cc?: Mailbox | Mailbox[];
  replyTo?: Mailbox | Mailbox[];
  subject: string;
  html?: string;
  text?: string;
  /** Custom headers. Names: RFC 5322 field-name characters; RESERVED_HEADERS are refused. */
  headers?: Record<string, string>;
  attachments?: ComposeAttachment[];
  /** `msg_…@sending-domain`, angle brackets optional. */
  messageId: string;
  /** Date header; pass the clock's now. */
  date: Date;
  /** RFC 2369 + RFC 8058 one-click: emitted as List-Unsubscribe and List-Unsubscribe-Post. */
  listUnsubscribe?: { url: string; mailto?: string };
}

export type ComposeErrorReason =
  | 'header_injection'
  | 'invalid_header_name'
  | 'reserved_header'
  | 'invalid_address'
  | 'invalid_message_id'
  | 'missing_body'
  | 'line_too_long';

/** Invalid input for a message. A validation_failed AppError, so the API answers 422. */
export class ComposeError extends AppError {
  constructor(
    readonly reason: ComposeErrorReason,
    readonly field: string,
    message: string,
  ) {
    super('validation_failed', `${field}: ${message}`, { errors: [{ field, message }], extra: { reason } });
    this.name = 'ComposeError';
  }
}

/**
 * Headers a caller may not set through `headers`: the ones the message's structure, its
 * routing or its authentication depend on. Each has its own field in ComposeInput or is set
 * by a later stage (DKIM-Signature by the signer; Received/Return-Path by the receiving MTA).
 * A `*` suffix matches a prefix.
 */
export const RESERVED_HEADERS: readonly string[] = [
  'from', 'sender', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'date', 'message-id',
  'mime-version', 'content-*', 'dkim-signature', 'arc-*', 'authentication-results',
  'return-path', 'received', 'resent-*', 'list-unsubscribe*',
];

/** RFC 5322 §2.2: field-name = 1*ftext, ftext = %d33-57 / %d59-126 (printable ASCII minus ':'). */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
/** CR, LF and the other controls (tab allowed: it is folding whitespace). */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
/** One plain addr-spec: no display name, no list separators, no brackets, no whitespace. */
const ADDR_SPEC = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+\.[^\s@<>,;:"()[\]\\]+$/;

/** RFC 5322 §2.1.1: a line is at most 998 octets, CRLF excluded. */
export const MAX_LINE_OCTETS = 998;

/**
 * Custom headers whose value is structured (message ids, URLs in angle brackets, addresses):
 * an RFC 2047 encoded word would change their meaning, so a token too long for one line makes
 * such a header unrepresentable, and it is refused.
 */
const STRUCTURED_HEADERS = new Set([
  'in-reply-to', 'references', 'list-id', 'list-post', 'list-help', 'list-subscribe', 'list-owner', 'list-archive',
  'disposition-notification-to', 'return-receipt-to', 'errors-to', 'feedback-id',
]);

/** The longest run of non-whitespace in `value`, in octets. */
function longestTokenOctets(value: string): number {
  let max = 0;
  for (const token of value.split(/[ \t]+/)) max = Math.max(max, Buffer.byteLength(token));
  return max;
}

/**
 * A header value as MailComposer should write it. Folding happens only at whitespace, so a
 * token that would leave a line longer than 998 octets even on a line of its own (after
 * `Name: `) cannot be folded: an unstructured value is then written as RFC 2047 encoded words
 * (nodemailer's encoder; 52-character words, folded between them), a structured one is
 * refused. Non-ASCII values are encoded by MailComposer anyway, so only ASCII values get here.
 */
function lineSafeValue(field: string, name: string, value: string): string | { prepared: true; foldLines: true; value: string } {
  if (/[^\x00-\x7f]/.test(value) || name.length + 2 + longestTokenOctets(value) <= MAX_LINE_OCTETS) return value;
  if (STRUCTURED_HEADERS.has(name.toLowerCase())) {
    throw new ComposeError('line_too_long', field, `has a word too long for one header line (${MAX_LINE_OCTETS} octets) and cannot be encoded, being a structured header`);
  }
  return { prepared: true, foldLines: true, value: encodeWord(value, 'Q', 52) };
}

export function isReservedHeader(name: string): boolean {
  const key = name.toLowerCase();
  return RESERVED_HEADERS.some((r) => (r.endsWith('*') ? key.startsWith(r.slice(0, -1)) : key === r));
}

function checkValue(field: string, value: string): void {
  if (CONTROL.test(value)) {
    throw new ComposeError('header_injection', field, 'must not contain CR, LF or other control characters');
  }
}

function checkAddress(field: string, email: string): void {
  checkValue(field, email);
  if (!ADDR_SPEC.test(email)) throw new ComposeError('invalid_address', field, `"${email}" is not a single email address`);
}

function mailboxes(field: string, input: Mailbox | Mailbox[] | undefined): { name: string; address: string }[] | undefined {
  if (input === undefined) return undefined;
  return (Array.isArray(input) ? input : [input]).map((m, i) => {
    const at = Array.isArray(input) ? `${field}[${i}]` : field;
    const { email, name } = typeof m === 'string' ? { email: m, name: undefined } : m;
    checkAddress(typeof m === 'string' ? at : `${at}.email`, email);
    if (name !== undefined) checkValue(`${at}.name`, name);
    return { name: name ?? '', address: email };
  });
}

function customHeaders(headers: Record<string, string> | undefined): Record<string, string | ReturnType<typeof lineSafeValue>> {
  const out: Record<string, string | ReturnType<typeof lineSafeValue>> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const field = `headers.${name}`;
    if (!FIELD_NAME.test(name)) throw new ComposeError('invalid_header_name', field, 'header names are printable ASCII without ":" or spaces');
    if (isReservedHeader(name)) throw new ComposeError('reserved_header', field, 'this header is set by Postline and cannot be overridden');
    checkValue(field, String(value));
    if (name.length + 2 > MAX_LINE_OCTETS) throw new ComposeError('line_too_long', field, 'header name too long');
    out[name] = lineSafeValue(field, name, String(value));
  }
  return out;
}

function unsubscribeHeaders(lu: ComposeInput['listUnsubscribe']): Record<string, string> {
  if (!lu) return {};
  const targets = [lu.url, ...(lu.mailto ? [lu.mailto] : [])];
  targets.forEach((t, i) => {
    const field = i === 0 ? 'listUnsubscribe.url' : 'listUnsubscribe.mailto';
    checkValue(field, t);
    if (/[<>\s,]/.test(t)) throw new ComposeError('header_injection', field, 'must not contain "<", ">", "," or spaces');
  });
  if (!/^https:\/\//i.test(lu.url) && !/^http:\/\//i.test(lu.url)) {
    throw new ComposeError('invalid_address', 'listUnsubscribe.url', 'must be an http(s) URL');
  }
  const mailto = lu.mailto ? (lu.mailto.startsWith('mailto:') ? lu.mailto : `mailto:${lu.mailto}`) : undefined;
  return {
    'List-Unsubscribe': [lu.url, mailto].filter(Boolean).map((u) => `<${u}>`).join(', '),
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };
}

function normalizeMessageId(id: string): string {
  checkValue('messageId', id);
  const bare = id.replace(/^<|>$/g, '');
  if (!/^[^\s<>@]+@[^\s<>@]+$/.test(bare)) throw new ComposeError('invalid_message_id', 'messageId', 'must look like id@domain');
  return `<${bare}>`;
}

/** The text part for an html-only message (links kept as "text [url]", images dropped). */
export { htmlToText };

/**
 * Every check composeMessage makes, without building anything: the API runs it at accept time
 * so a header injection or a reserved header is a 422 there, never a failure in the worker.
 */
export function validateComposeInput(input: Omit<ComposeInput, 'messageId' | 'date'>): void {
  prepare({ ...input, messageId: 'check@example.com', date: new Date(0) });
}

function prepare(input: ComposeInput) {
  checkAddress('from.email', input.from.email);
  if (input.from.name !== undefined) checkValue('from.name', input.from.name);
  const to = mailboxes('to', input.to);
  if (!to || to.length === 0) throw new ComposeError('invalid_address', 'to', 'at least one recipient is required');
  const cc = mailboxes('cc', input.cc);
  const replyTo = mailboxes('replyTo', input.replyTo);
  checkValue('subject', input.subject);
  if (input.html === undefined && input.text === undefined) {
    throw new ComposeError('missing_body', 'html', 'either html or text is required');
  }
  const attachments = (input.attachments ?? []).map((a, i) => {
    checkValue(`attachments[${i}].filename`, a.filename);
    if (a.contentType !== undefined) {
      checkValue(`attachments[${i}].contentType`, a.contentType);
      if (!/^[\w.+-]+\/[\w.+-]+$/.test(a.contentType)) {
        throw new ComposeError('header_injection', `attachments[${i}].contentType`, 'must be a bare type/subtype');
      }
    }
    return { filename: a.filename, content: a.content, contentType: a.contentType };
  });
  const headers = { ...customHeaders(input.headers), ...unsubscribeHeaders(input.listUnsubscribe) };
  const subject = lineSafeValue('subject', 'Subject', input.subject);
  return { to, cc, replyTo, attachments, headers, subject, messageId: normalizeMessageId(input.messageId) };
}

/**
 * Validate everything, then write the message. The narrow writer (src/mail/mime/) covers what
 * Postline sends and writes the bytes MailComposer would; anything else is composed by
 * MailComposer. Both draw the boundaries' random part the way nodemailer does.
 */
export async function composeMessage(input: ComposeInput): Promise<Buffer> {
  const parts = messageParts(input);
  const baseBoundary = nextBaseBoundary();
  return writeMessage(parts, baseBoundary) ?? composeWithMailComposer(parts, baseBoundary);
}

/**
 * composeMessage for a caller that signs the message next: the narrow writer's strings (header
 * fields and body, see writeMessageText), which the DKIM signer reads without making them bytes
 * first, or MailComposer's bytes for a shape that writer does not cover. Either gives
 * composeMessage's bytes.
 */
export async function composeWritten(input: ComposeInput): Promise<WrittenMessage | Buffer> {
  const parts = messageParts(input);
  const baseBoundary = nextBaseBoundary();
  return writeMessageText(parts, baseBoundary) ?? composeWithMailComposer(parts, baseBoundary);
}

export type { WrittenMessage };

/**
 * A boundary base as MimeNode draws one: 8 bytes from crypto.randomBytes as 16 hex digits.
 * They are drawn 128 at a time: a randomBytes call per message cost more than the draw.
 */
const BASES_PER_DRAW = 128;
let randomPool = Buffer.alloc(0);
let poolOffset = 0;
function nextBaseBoundary(): string {
  if (poolOffset >= randomPool.length) {
    randomPool = randomBytes(8 * BASES_PER_DRAW);
    poolOffset = 0;
  }
  poolOffset += 8;
  return randomPool.toString('hex', poolOffset - 8, poolOffset);
}

/** The validated input as the writers take it; the text part derived from the HTML when there is none. */
function messageParts(input: ComposeInput): MessageParts {
  const { to, cc, replyTo, attachments, headers, subject, messageId } = prepare(input);
  return {
    from: { name: input.from.name ?? '', address: input.from.email },
    to,
    cc,
    replyTo,
    subject,
    headers,
    messageId,
    date: input.date,
    html: input.html,
    text: input.text ?? (input.html !== undefined ? htmlToText(input.html) : undefined),
    attachments,
  };
}

/**
 * MailComposer builds the MIME tree, written in one pass by buildMimeSync (nodemailer's headers
 * and encoders, no stream pipeline per node), or by nodemailer's own build() for a tree that
 * walk does not cover.
 */
async function composeWithMailComposer(parts: MessageParts, baseBoundary: string): Promise<Buffer> {
  const composer = new MailComposer({
    ...parts,
    // A prepared value (encoded words) is how MailComposer takes a header it must not re-encode.
    subject: parts.subject as string,
    headers: parts.headers as Record<string, string>,
    baseBoundary,
    // The message is built from the values given, never from files or URLs they might name.
    disableFileAccess: true,
    disableUrlAccess: true,
    newline: 'win',
  });
  const tree = composer.compile();
  return buildMimeSync(tree as unknown as MimeTreeNode) ?? tree.build();
}

/**
 * The two writers, each with a given boundary base, for the differential test
 * (test/mail/mime-differential.test.ts) and bench/compose.ts: the narrow writer's bytes (null
 * where it does not cover the message) and MailComposer's.
 */
export function composeNarrow(input: ComposeInput, baseBoundary: string): Buffer | null {
  return writeMessage(messageParts(input), baseBoundary);
}

/** composeNarrow as strings, for test/mail/dkim-written.test.ts. */
export function composeNarrowWritten(input: ComposeInput, baseBoundary: string): WrittenMessage | null {
  return writeMessageText(messageParts(input), baseBoundary);
}

export async function composeWithLibrary(input: ComposeInput, baseBoundary: string): Promise<Buffer> {
  return composeWithMailComposer(messageParts(input), baseBoundary);
}
