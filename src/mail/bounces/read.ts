/**
 * Reads any mail that comes back to a return path and says what it is (docs/bounces.md):
 * a bounce with its failed recipients, a complaint (ARF, also sent as text/plain), a
 * "delivered" notice, an auto-reply, or unknown. Used by the live intake
 * (domain/bounces.ts, behind the inbound SMTP listener) and by `postline bounces check`,
 * which runs it without a database.
 *
 * mailparser does the MIME work. Its `keepDeliveryStatus` keeps message/delivery-status as a
 * part wherever it sits (multipart/report, or multipart/mixed as OpenSMTPD sends it), and
 * `ignoreEmbedded` keeps a returned message/rfc822 whole. When the MIME structure is broken
 * (a boundary that never appears), the delivery-status fields are looked for in the raw text.
 */
import type { ParsedMail, SimpleParserOptions } from 'mailparser';
import { parseMail } from '../parse-mail.js';
import { bareAddress, field, mtaName, normalizeMessageId, parseFieldBlocks, readOriginalHeaders, ORIGINAL_MESSAGE_TYPES, type FieldBlock } from '../dsn.js';
import { classifyBounce, reasonFromText, type BounceVerdict } from './verdict.js';
import { diagnosticDialect, reporterFamily, type MtaFamily } from './dialect.js';
import type { BounceReason, ReasonSide } from './reasons.js';
import { readSignals, type MailSignals } from './signals.js';
import { readTextRecipients, reportSection, type TextRecipient } from './text-report.js';

export type ReturnedMailKind = 'bounce' | 'complaint' | 'delivered' | 'auto_reply' | 'unknown';

export interface BouncedRecipient {
  email: string;
  originalRecipient: string | null;
  /** DSN Action, or what the text said: failed, delayed, delivered, relayed, expanded. */
  action: string | null;
  /** Enhanced status code, `5.1.1`, given or read from the diagnostic. */
  status: string | null;
  /** SMTP reply code, 550. */
  reply: number | null;
  diagnostic: string | null;
  remoteMta: string | null;
  reason: BounceReason;
  side: ReasonSide;
  permanent: boolean;
  /** The address is gone: a hard bounce that suppresses it. */
  dead: boolean;
  /** The receiver refused the sender, not the address (side `sender`): never suppresses. */
  ourFault: boolean;
}

export interface ReturnedMail {
  kind: ReturnedMailKind;
  /** How it was read: `rfc3464`, `rfc3464-text` (fields found in a broken MIME body), `text`, `arf`, `arf-text`, `mdn`, or `none`. */
  format: string;
  reportingMta: string | null;
  /** The family of the MTA that wrote the report (./dialect.ts), when its wording or layout shows it. */
  mta: MtaFamily | null;
  /** Message-ID of the message that bounced (returned message, returned headers, quoted headers, In-Reply-To). */
  originalMessageId: string | null;
  /** Envelope sender or From of the returned original, when shown. */
  originalFrom: string | null;
  /** The returned mail's own Subject. */
  subject: string;
  recipients: BouncedRecipient[];
}

// `ignoreEmbedded` is a splitter option mailparser passes through but does not declare.
const PARSER_OPTIONS: SimpleParserOptions = {
  keepDeliveryStatus: true,
  ...{ ignoreEmbedded: true },
  skipTextToHtml: true,
  skipImageLinks: true,
  skipTextLinks: true,
};

const DELIVERY_STATUS = new Set(['message/delivery-status', 'message/global-delivery-status']);
const FEEDBACK_REPORT = 'message/feedback-report';
const DISPOSITION = new Set(['message/disposition-notification', 'message/global-disposition-notification']);
/** More is not a bounce report but an attachment-laden message; reading stops there. */
const MAX_TEXT = 2_000_000;

/** A leading mbox `From ` separator line is not part of the message. */
export function stripMboxLine(raw: Buffer): Buffer {
  if (raw.length > 5 && raw.subarray(0, 5).toString('latin1') === 'From ') {
    const nl = raw.indexOf(0x0a);
    return nl < 0 ? Buffer.alloc(0) : raw.subarray(nl + 1);
  }
  return raw;
}

export async function readReturnedMail(input: Buffer | string): Promise<ReturnedMail> {
  const raw = stripMboxLine(typeof input === 'string' ? Buffer.from(input, 'utf8') : input);
  let mail: ParsedMail | null = null;
  try {
    mail = await parseMail(raw, PARSER_OPTIONS);
  } catch {
    mail = null;
  }
  const headers = mail?.headers ?? new Map<string, unknown>();
  const rawText = raw.subarray(0, MAX_TEXT).toString('utf8');
  const bodyStart = /\r?\n\r?\n/.exec(rawText);
  const rawBody = bodyStart ? rawText.slice(bodyStart.index) : rawText;
  const text = (mail?.text ?? (mail?.html ? '' : rawBody)).slice(0, MAX_TEXT);
  const subject = mail?.subject ?? '';
  const from = mail?.from?.text ?? String(headers.get('from') ?? '');
  const parts = (mail?.attachments ?? []).map((a) => ({ type: a.contentType.toLowerCase(), content: a.content, partId: a.partId ?? '' }));
  const reportType = ((headers.get('content-type') as { params?: Record<string, string> } | undefined)?.params?.['report-type'] ?? '').toLowerCase();

  const ctx: Context = {
    headers, subject, from, text, rawBody, parts,
    exclude: [...addressesOf(mail?.to), ...addressesOf(mail?.from)],
    failedHeader: splitAddresses(String(headers.get('x-failed-recipients') ?? '')),
  };
  const original = await originalOf(ctx);
  ctx.exclude.push(...(original.from ? [original.from] : []));
  ctx.originalTo = original.to;
  const base = { reportingMta: null, mta: null as MtaFamily | null, originalMessageId: original.messageId, originalFrom: original.from, subject, recipients: [] };

  // Complaints first: an ARF report is never a bounce, whatever its subject.
  if (parts.some((p) => p.type === FEEDBACK_REPORT)) return { ...base, kind: 'complaint', format: 'arf' };
  if (isTextArf(text) || isTextArf(rawBody)) return { ...base, kind: 'complaint', format: 'arf-text' };

  const signals = readSignals({ from, subject, text: text || rawBody, headers });
  const statusPart = parts.find((p) => DELIVERY_STATUS.has(p.type));
  const dsnText = statusPart ? statusPart.content.toString('utf8') : dsnFieldsInText(rawBody);
  ctx.mta = reporterFamily([`From: ${from}`, `Subject: ${subject}`, ...headers.keys(), (text || rawBody).slice(0, 8000), dsnText?.slice(0, 4000) ?? ''].join('\n'));
  base.mta = ctx.mta;
  if (dsnText !== null) {
    const dsn = readDeliveryStatus(dsnText, ctx, signals);
    if (dsn.recipients.length > 0) {
      return { ...base, ...dsn, originalMessageId: base.originalMessageId ?? dsn.messageId, kind: kindOfDsn(dsn.recipients), format: statusPart ? 'rfc3464' : 'rfc3464-text' };
    }
  }
  if (parts.some((p) => DISPOSITION.has(p.type)) || reportType === 'disposition-notification') return { ...base, kind: 'delivered', format: 'mdn' };

  const bounceLike = signals.fromDaemon || signals.bounceSubject;
  if (signals.delivered && !signals.bounceText && !signals.bounceSubject) return { ...base, kind: 'delivered', format: 'text' };
  if (signals.autoReplyStrong && !bounceLike) return { ...base, kind: 'auto_reply', format: 'text' };
  const recipients = bounceLike || signals.bounceText || ctx.failedHeader.length > 0 ? textRecipients(ctx, signals) : [];
  const failing = recipients.filter((r) => r.status !== null || r.reply !== null || r.reason !== 'undefined');
  if ((bounceLike && (signals.bounceText || recipients.length > 0)) || (signals.bounceText && failing.length > 0) || ctx.failedHeader.length > 0) {
    return { ...base, kind: 'bounce', format: 'text', reportingMta: reportingMtaOf(text), recipients };
  }
  if (signals.autoReplyStrong || signals.autoReplyWeak) return { ...base, kind: 'auto_reply', format: 'text' };
  return { ...base, kind: 'unknown', format: 'none' };
}

interface Context {
  headers: Map<string, unknown>;
  subject: string;
  from: string;
  text: string;
  rawBody: string;
  parts: { type: string; content: Buffer; partId: string }[];
  exclude: string[];
  failedHeader: string[];
  /** First To of the returned original: the failed address when the report names none. */
  originalTo?: string | null;
  /** The reporting MTA's family. */
  mta?: MtaFamily | null;
}

function addressesOf(value: ParsedMail['to'] | ParsedMail['from']): string[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.flatMap((o) => o.value.map((a) => a.address).filter((a): a is string => !!a));
}

function splitAddresses(value: string): string[] {
  return value.split(/[,\s]+/).map((a) => bareAddress(a)).filter((a): a is string => !!a && a.includes('@'));
}

/** A Feedback-Type field in the body, with one of ARF's other fields: a complaint sent as text. */
function isTextArf(text: string): boolean {
  return /^Feedback-Type:[ \t]*[a-z-]+/im.test(text) && /^(?:User-Agent|Version|Original-Mail-From|Arrival-Date|Reported-Domain|Source-IP):/im.test(text);
}

/** Delivery-status fields in a body whose MIME structure did not yield the part. */
function dsnFieldsInText(body: string): string | null {
  const recipient = /^(?:Final|Original)-Recipient:/im.exec(body);
  if (!recipient || !/^(?:Action|Status):/im.test(body.slice(recipient.index))) return null;
  const start = /^(?:Reporting-MTA|Arrival-Date|Received-From-MTA|X-Postfix-Queue-ID|Original-Envelope-Id):/im.exec(body);
  return body.slice(start && start.index < recipient.index ? start.index : recipient.index);
}

interface DsnRead {
  reportingMta: string | null;
  messageId: string | null;
  recipients: BouncedRecipient[];
}

function readDeliveryStatus(statusText: string, ctx: Context, signals: MailSignals): DsnRead {
  const perMessage: FieldBlock = new Map();
  const blocks: FieldBlock[] = [];
  for (const block of parseFieldBlocks(statusText)) {
    const isRecipient = ['final-recipient', 'original-recipient', 'x-actual-recipient', 'action', 'status', 'diagnostic-code'].some((f) => block.has(f));
    if (isRecipient) blocks.push(block);
    else for (const [k, v] of block) perMessage.set(k, [...(perMessage.get(k) ?? []), ...v]);
  }
  // Some generators (and a missing blank line) put the per-message fields in the first recipient group.
  if (blocks.length > 0 && !perMessage.has('reporting-mta') && blocks[0].has('reporting-mta')) perMessage.set('reporting-mta', blocks[0].get('reporting-mta')!);
  let fromText: TextRecipient[] | null = null;
  const textFor = () => (fromText ??= readTextRecipients(reportSection(ctx.text).report, { exclude: ctx.exclude, known: [] }));
  const recipients: BouncedRecipient[] = [];
  blocks.forEach((block, i) => {
    const originalRecipient = bareAddress(field(block, 'original-recipient'));
    let email = bareAddress(field(block, 'final-recipient')) ?? bareAddress(field(block, 'x-actual-recipient')) ?? originalRecipient;
    // Without Final-Recipient: the address the text or X-Failed-Recipients names, in order.
    email ??= ctx.failedHeader[i] ?? textFor()[i]?.email ?? (blocks.length === 1 ? ctx.originalTo : null) ?? null;
    if (!email || !email.includes('@')) return;
    let action = field(block, 'action')?.toLowerCase().split(/[\s(;]/)[0] ?? null;
    const statusField = field(block, 'status');
    const diagnosticCode = withoutType(field(block, 'diagnostic-code'));
    const textual = textFor().find((t) => t.email.toLowerCase() === email!.toLowerCase());
    // The DSN's diagnostic first; the human-readable text when the DSN says nothing telling.
    const diagnostic = diagnosticCode && reasonFromText(diagnosticCode) ? diagnosticCode : [diagnosticCode, textual?.diagnostic].filter(Boolean).join(' ') || null;
    action ??= statusField?.trim().startsWith('2') ? 'delivered' : signals.delayed && statusField?.trim().startsWith('4') ? 'delayed' : 'failed';
    const remoteMta = hostOnly(mtaName(field(block, 'remote-mta'))) ?? textual?.remoteMta ?? null;
    const verdict = classifyBounce({ status: statusField, diagnostic, action, dialect: diagnosticDialect(remoteMta, ctx.mta ?? null) });
    recipients.push(toRecipient(email, originalRecipient, action, diagnosticCode ?? textual?.diagnostic ?? null, remoteMta, verdict));
  });
  return {
    reportingMta: hostOnly(mtaName(field(perMessage, 'reporting-mta'))),
    messageId: normalizeMessageId(field(perMessage, 'x-original-message-id')),
    recipients,
  };
}

function toRecipient(email: string, originalRecipient: string | null, action: string | null, diagnostic: string | null, remoteMta: string | null, v: BounceVerdict): BouncedRecipient {
  return {
    email, originalRecipient, action, status: v.status, reply: v.reply, diagnostic, remoteMta,
    reason: v.reason, side: v.side, permanent: v.permanent, dead: v.dead, ourFault: v.ourFault,
  };
}

/** `mail.example.org; [203.0.113.7]` → `mail.example.org`. */
function hostOnly(mta: string | null): string | null {
  const host = mta?.split(/[\s;(\[]/)[0].replace(/\.$/, '');
  return host || null;
}

function withoutType(value: string | null): string | null {
  if (!value) return null;
  const semi = value.indexOf(';');
  const out = (semi >= 0 && semi < 20 ? value.slice(semi + 1) : value).trim();
  return out || null;
}

function kindOfDsn(recipients: BouncedRecipient[]): ReturnedMailKind {
  return recipients.some((r) => r.action === 'failed' || r.action === 'delayed') ? 'bounce' : 'delivered';
}

function textRecipients(ctx: Context, signals: MailSignals): BouncedRecipient[] {
  const { report } = reportSection(ctx.text || ctx.rawBody);
  let found = readTextRecipients(report, { exclude: ctx.exclude, known: ctx.failedHeader });
  // A report that names no address (display names only): the returned original's To.
  if (found.length === 0 && ctx.originalTo) found = readTextRecipients(`${ctx.originalTo}\n${report}`, { exclude: ctx.exclude, known: [ctx.originalTo] });
  const action = signals.delayed ? 'delayed' : 'failed';
  return found.map((t) => {
    // The reply line decides when it is telling; else everything said about the address, then the subject.
    const diagnosticReason = reasonFromText(t.diagnostic);
    const evidence = diagnosticReason ? t.diagnostic : reasonFromText(t.chunk) ? t.chunk : `${t.chunk}\n${ctx.subject}\n${found.length === 1 ? report : ''}`;
    const verdict = classifyBounce({ status: findStatusIn(t), diagnostic: evidence, action, dialect: diagnosticDialect(t.remoteMta, ctx.mta ?? null) });
    return toRecipient(t.email, null, action, t.diagnostic, t.remoteMta, verdict);
  });
}

function findStatusIn(t: TextRecipient): string | null {
  const m = /(?<![\d.])([245]\.\d{1,3}\.\d{1,3})(?![\d.]*\d)/.exec(t.diagnostic ?? '') ?? /(?<![\d.])([245]\.\d{1,3}\.\d{1,3})(?![\d.]*\d)/.exec(t.chunk);
  return m ? m[1] : null;
}

function reportingMtaOf(text: string): string | null {
  const m = /(?:qmail-send program at|DragonFly Mail Agent[^\n]* at|delivery status notification from|mail (?:delivery )?(?:system|agent|server) at|This is the mail (?:delivery agent|system) at|Reporting-MTA: dns; ?)\s*([a-z0-9][a-z0-9.-]*\.[a-z]{2,})/i.exec(text);
  return m ? m[1].toLowerCase() : null;
}

/** The returned original: its part if attached, else headers quoted in the text, else In-Reply-To. */
async function originalOf(ctx: Context): Promise<{ messageId: string | null; from: string | null; to: string | null }> {
  const part = ctx.parts.find((p) => ORIGINAL_MESSAGE_TYPES.includes(p.type));
  if (part) {
    const h = await readOriginalHeaders(part.content);
    if (h.messageId || h.from) return { messageId: h.messageId, from: h.from, to: h.to };
  }
  const { returned } = reportSection(ctx.text || ctx.rawBody);
  const quoted = /^[ \t>]*Message-I[Dd][ \t]*:[ \t]*\r?\n?[ \t]*(<[^<>\s]+>|[^\s<>]+@[^\s<>]+)/m;
  const id = quoted.exec(returned) ?? quoted.exec(ctx.text) ?? quoted.exec(ctx.rawBody);
  const fromLine = /^[ \t>]*From:[^\n]*?<?([^\s<>"]+@[^\s<>"]+?)>?\s*$/m.exec(returned);
  const toLine = /^[ \t>]*To:[^\n]*?<?([^\s<>",]+@[^\s<>",]+?)>?\s*$/m.exec(returned);
  return {
    messageId: normalizeMessageId(id?.[1]) ?? normalizeMessageId(headerString(ctx.headers.get('in-reply-to'))),
    from: fromLine ? fromLine[1] : null,
    to: toLine ? toLine[1] : null,
  };
}

function headerString(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return null;
}
