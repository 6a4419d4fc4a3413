/**
 * The multipart/report container (RFC 6522) and the field blocks of its machine-readable
 * parts, shared by complaints (arf.ts) and bounces (bounces/read.ts, which reads RFC 3464
 * delivery-status fields and everything else that comes back).
 *
 * mailparser does the MIME work (boundaries, transfer encodings, RFC 2047/2231) with two
 * options that keep the report's parts intact instead of folding them into the body text:
 * `keepDeliveryStatus` (message/delivery-status as an attachment) and `ignoreEmbedded`
 * (passed through to its splitter: an inline message/rfc822 stays one attachment holding
 * the raw original, rather than being flattened into the report's text and losing its
 * headers). The report fields themselves are header-like blocks that mailparser does not
 * interpret; `parseFieldBlocks` reads them (folded lines, repeated fields, blank-line
 * separated groups).
 */
import type { AddressObject, SimpleParserOptions } from 'mailparser';
import { parseMail } from './parse-mail.js';

// ---------------------------------------------------------------------------------------
// multipart/report, shared with arf.ts

export interface ReportPart {
  /** Lower-cased MIME type, e.g. `message/delivery-status`. */
  contentType: string;
  /** Transfer-decoded content. */
  content: Buffer;
}

export interface MultipartReport {
  /** The `report-type` parameter, lower-cased; null when absent. */
  reportType: string | null;
  /** The report's direct non-multipart children other than its human-readable text. */
  parts: ReportPart[];
  /** Headers of the report message itself (mailparser's map). */
  headers: Map<string, unknown>;
}

export type ReportReadResult =
  | { ok: true; report: MultipartReport }
  | { ok: false; reason: 'unparseable' | 'not_multipart_report'; detail: string };

// `ignoreEmbedded` is a splitter option mailparser passes through but does not declare.
const PARSER_OPTIONS: SimpleParserOptions = {
  keepDeliveryStatus: true,
  ...{ ignoreEmbedded: true },
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipImageLinks: true,
  skipTextLinks: true,
};

/** Content types that carry the original message or its header block. */
export const ORIGINAL_MESSAGE_TYPES: readonly string[] = [
  'message/rfc822',
  'text/rfc822-headers',
  'message/rfc822-headers', // seen in the wild for text/rfc822-headers
  'message/global', // RFC 6532
  'message/global-headers', // RFC 6533
];

export async function readMultipartReport(raw: Buffer | string): Promise<ReportReadResult> {
  let mail;
  try {
    mail = await parseMail(raw, PARSER_OPTIONS);
  } catch (err) {
    return { ok: false, reason: 'unparseable', detail: `not a MIME message: ${(err as Error).message}` };
  }
  const ct = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  const type = ct?.value?.toLowerCase() ?? 'text/plain';
  if (type !== 'multipart/report') {
    return { ok: false, reason: 'not_multipart_report', detail: `Content-Type is ${type}, not multipart/report` };
  }
  const parts = mail.attachments
    // Direct children only ("2", "3"): not an image inside the text part, not a part of the
    // returned original.
    .filter((a) => a.partId !== undefined && !a.partId.includes('.'))
    .map((a) => ({ contentType: a.contentType.toLowerCase(), content: a.content }));
  return {
    ok: true,
    report: { reportType: ct?.params?.['report-type']?.toLowerCase() ?? null, parts, headers: mail.headers },
  };
}

/** One group of `Name: value` fields; names lower-cased, values unfolded, in order. */
export type FieldBlock = Map<string, string[]>;

/**
 * Parse header-like field groups (RFC 3464 §2.1, RFC 5965 §3.1, a header section).
 * Continuation lines (leading space or tab) are unfolded and runs of whitespace collapse to
 * one space. An empty or all-whitespace line ends a group. Lines that are neither fields nor
 * continuations are skipped: reports come from many generators, some sloppy.
 */
export function parseFieldBlocks(text: string): FieldBlock[] {
  const blocks: FieldBlock[] = [];
  let block: FieldBlock | null = null;
  let last: { values: string[]; index: number } | null = null;
  for (const line of text.split(/\r\n|\n|\r/)) {
    if (line.trim() === '') {
      if (block) blocks.push(block);
      block = null;
      last = null;
    } else if (line[0] === ' ' || line[0] === '\t') {
      if (last) last.values[last.index] = `${last.values[last.index]} ${line.trim()}`.trim();
    } else {
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '';
      if (!/^[!-9;-~]+$/.test(name)) {
        last = null;
        continue;
      }
      block ??= new Map();
      const values = block.get(name) ?? [];
      values.push(line.slice(colon + 1).trim());
      block.set(name, values);
      last = { values, index: values.length - 1 };
    }
  }
  if (block) blocks.push(block);
  for (const b of blocks) for (const values of b.values()) for (let i = 0; i < values.length; i++) values[i] = values[i].replace(/\s+/g, ' ');
  return blocks;
}

/** The first non-empty value of a field, or null. */
export function field(block: FieldBlock | undefined, name: string): string | null {
  const value = block?.get(name)?.find((v) => v !== '');
  return value ?? null;
}

/** `rfc822; <a@b>` or `<a@b>` or `a@b` → `a@b`; null when there is no address. */
export function bareAddress(value: string | null | undefined): string | null {
  if (!value) return null;
  let v = value.trim();
  const typed = /^[A-Za-z0-9-]+\s*;\s*(.*)$/.exec(v);
  if (typed) v = typed[1];
  const angle = /<([^<>]*)>/.exec(v);
  if (angle) v = angle[1];
  v = v.trim();
  return v.includes('@') && !/\s/.test(v) ? v : null;
}

/** `smtp; 550 5.1.1 …` → `550 5.1.1 …` (RFC 3464 typed values). */
export function withoutType(value: string | null): string | null {
  if (value === null) return null;
  const m = /^[A-Za-z0-9-]+\s*;\s*(.*)$/.exec(value);
  const v = (m ? m[1] : value).trim();
  return v === '' ? null : v;
}

/** `dns; gmail-smtp-in.l.google.com. (2a00:…, the server for …)` → `gmail-smtp-in.l.google.com`. */
export function mtaName(value: string | null): string | null {
  const v = withoutType(value)?.replace(/\s*\(.*$/, '').replace(/\.$/, '');
  return v ? v : null;
}

/** A Message-ID in its `<id>` form (first one if several), tolerant of missing brackets. */
export function normalizeMessageId(value: string | null | undefined): string | null {
  if (!value) return null;
  const angle = /<([^<>\s]+)>/.exec(value);
  if (angle) return `<${angle[1]}>`;
  const bare = value.trim().split(/\s+/)[0];
  return bare ? `<${bare}>` : null;
}

export interface OriginalHeaders {
  messageId: string | null;
  from: string | null;
  /** First address of To. */
  to: string | null;
  subject: string | null;
  /** All header fields, for provider specifics (e.g. X-HmXmrOriginalRecipient). */
  fields: FieldBlock;
}

/**
 * Headers of a returned original (message/rfc822 or text/rfc822-headers content). Only the
 * header section is read; mailparser decodes encoded words and parses the address lists.
 */
export async function readOriginalHeaders(content: Buffer): Promise<OriginalHeaders> {
  const text = content.toString('utf8').replace(/^(?:[ \t]*\r?\n)+/, '');
  const end = /\r?\n[ \t]*\r?\n/.exec(text);
  const head = end ? text.slice(0, end.index) : text;
  const fields = parseFieldBlocks(head)[0] ?? new Map();
  let messageId: string | null = null;
  let from: string | null = null;
  let to: string | null = null;
  let subject: string | null = null;
  try {
    const mail = await parseMail(Buffer.from(`${head}\r\n\r\n`, 'utf8'), PARSER_OPTIONS);
    messageId = normalizeMessageId(mail.messageId);
    from = firstAddress(mail.from);
    to = firstAddress(mail.to);
    subject = mail.subject ?? null;
  } catch {
    // Fall back to the raw fields below.
  }
  return {
    messageId: messageId ?? normalizeMessageId(field(fields, 'message-id')),
    from: from ?? bareAddress(field(fields, 'from')),
    to: to ?? bareAddress(field(fields, 'to')),
    subject: subject ?? field(fields, 'subject'),
    fields,
  };
}

function firstAddress(value: AddressObject | AddressObject[] | undefined): string | null {
  const objects = value === undefined ? [] : Array.isArray(value) ? value : [value];
  for (const o of objects) {
    for (const a of o.value) {
      const found = a.address || a.group?.find((g) => g.address)?.address;
      if (found) return found;
    }
  }
  return null;
}
