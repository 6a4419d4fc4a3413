/**
 * Abuse Reporting Format complaints (RFC 5965): a multipart/report whose parts are a human
 * readable text, a message/feedback-report field block, and the original message as
 * message/rfc822 (Yahoo, AOL, the RFC's examples) or only its headers as
 * text/rfc822-headers (Microsoft JMRP and others).
 *
 * Only what matching and the stored record need is interpreted (docs/architecture.md#complaints-and-bounces-coming-back); every field
 * of the feedback report is kept in `fields`. Providers differ: Version 0.1 (Yahoo, AOL),
 * lower-case field names (Microsoft), the historic Received-Date instead of Arrival-Date,
 * no Original-Rcpt-To (the recipient is redacted or only in the original's headers).
 */
import { parseMail } from './parse-mail.js';
import {
  bareAddress,
  field,
  ORIGINAL_MESSAGE_TYPES,
  parseFieldBlocks,
  readMultipartReport,
  readOriginalHeaders,
  mtaName,
  type FieldBlock,
} from './dsn.js';

export interface ArfReport {
  /** Lower-cased: abuse, fraud, virus, other, not-spam, auth-failure, … */
  feedbackType: string;
  userAgent: string | null;
  version: string | null;
  /** Envelope sender of the original, without angle brackets. */
  originalMailFrom: string | null;
  /** First Original-Rcpt-To, without angle brackets. */
  originalRcptTo: string | null;
  /** Arrival-Date, or the historic Received-Date, as written. */
  arrivalDate: string | null;
  reportingMta: string | null;
  sourceIp: string | null;
  reportedDomains: string[];
  reportedUris: string[];
  /** Message-ID of the original in `<id>` form. */
  originalMessageId: string | null;
  /** First address of the original's From. */
  originalFrom: string | null;
  /** First address of the original's To. */
  originalTo: string | null;
  originalSubject: string | null;
  /**
   * The complaining address, best evidence first: Original-Rcpt-To, the original's
   * X-HmXmrOriginalRecipient (Microsoft), the original's To.
   */
  recipient: string | null;
  /** Every feedback-report field, names lower-cased, values unfolded. */
  fields: Record<string, string[]>;
}

export type ArfFailureReason = 'unparseable' | 'not_multipart_report' | 'no_feedback_report' | 'missing_feedback_type';

export type ArfParseResult = { ok: true; report: ArfReport } | { ok: false; reason: ArfFailureReason; detail: string };

export async function parseArf(raw: Buffer | string): Promise<ArfParseResult> {
  const read = await readMultipartReport(raw);
  if (!read.ok) {
    // Some providers send the report as text/plain: the fields, then the original's headers.
    if (read.reason === 'not_multipart_report') return (await parseTextArf(raw)) ?? read;
    return read;
  }
  const { parts } = read.report;
  // Accepted whatever the report-type parameter says (some generators omit it): the
  // feedback-report part is what makes a complaint.
  const feedback = parts.find((p) => p.contentType === 'message/feedback-report');
  if (!feedback) {
    return { ok: false, reason: 'no_feedback_report', detail: 'multipart/report without a message/feedback-report part' };
  }
  // One group by the RFC; merged in case a generator put blank lines between fields.
  const fields: FieldBlock = new Map();
  for (const block of parseFieldBlocks(feedback.content.toString('utf8'))) {
    for (const [name, values] of block) fields.set(name, [...(fields.get(name) ?? []), ...values]);
  }
  const feedbackType = field(fields, 'feedback-type')?.toLowerCase();
  if (!feedbackType) {
    return { ok: false, reason: 'missing_feedback_type', detail: 'feedback report has no Feedback-Type field' };
  }

  const originalPart = parts.find((p) => ORIGINAL_MESSAGE_TYPES.includes(p.contentType));
  return { ok: true, report: await toReport(fields, feedbackType, originalPart?.content ?? null) };
}

/**
 * A complaint sent as a plain-text message: a paragraph of feedback-report fields
 * (Feedback-Type with User-Agent, Version, Original-Mail-From…) and, in a later paragraph,
 * the original's headers. Null when the text holds no such fields.
 */
async function parseTextArf(raw: Buffer | string): Promise<ArfParseResult | null> {
  let text: string;
  try {
    text = (await parseMail(raw, { skipHtmlToText: false, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true })).text ?? '';
  } catch {
    return null;
  }
  const paragraphs = text.split(/\r?\n[ \t]*\r?\n/);
  const at = paragraphs.findIndex((p) => /^Feedback-Type:[ \t]*\S/im.test(p) && /^(?:User-Agent|Version|Original-Mail-From|Arrival-Date|Source-IP|Reported-Domain):/im.test(p));
  if (at < 0) return null;
  const fields: FieldBlock = new Map();
  for (const block of parseFieldBlocks(paragraphs[at].slice(/^Feedback-Type:/im.exec(paragraphs[at])!.index))) {
    for (const [name, values] of block) fields.set(name, [...(fields.get(name) ?? []), ...values]);
  }
  const feedbackType = field(fields, 'feedback-type')!.toLowerCase();
  const originalHeaders = paragraphs.slice(at + 1).find((p) => /^(?:Message-ID|From|Subject|Received|To):/im.test(p));
  return { ok: true, report: await toReport(fields, feedbackType, originalHeaders ? Buffer.from(originalHeaders, 'utf8') : null) };
}

async function toReport(fields: FieldBlock, feedbackType: string, originalContent: Buffer | null): Promise<ArfReport> {
  const original = originalContent ? await readOriginalHeaders(originalContent) : null;
  const originalRcptTo = bareAddress(field(fields, 'original-rcpt-to'));
  const originalTo = original?.to ?? null;
  return {
    feedbackType,
    userAgent: field(fields, 'user-agent'),
    version: field(fields, 'version'),
    originalMailFrom: bareAddress(field(fields, 'original-mail-from')),
    originalRcptTo,
    arrivalDate: field(fields, 'arrival-date') ?? field(fields, 'received-date'),
    reportingMta: mtaName(field(fields, 'reporting-mta')),
    sourceIp: field(fields, 'source-ip'),
    reportedDomains: fields.get('reported-domain') ?? [],
    reportedUris: fields.get('reported-uri') ?? [],
    originalMessageId: original?.messageId ?? null,
    originalFrom: original?.from ?? null,
    originalTo,
    originalSubject: original?.subject ?? null,
    recipient: originalRcptTo ?? bareAddress(field(original?.fields, 'x-hmxmroriginalrecipient')) ?? originalTo,
    fields: Object.fromEntries(fields),
  };
}
