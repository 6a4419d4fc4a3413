import { invalid, AppError, type FieldError } from '../../errors.js';
import { validateComposeInput } from '../../mail/compose.js';
import { isAsciiLocalPart, parseEmailAddress, type EmailAddress } from '../email-address.js';

/** POST /api/v1/emails body, after schema validation. */
export interface SendRequest {
  to: string;
  from: { email: string; name?: string };
  subject?: string;
  html?: string;
  text?: string;
  templateId?: string;
  variables?: Record<string, unknown>;
  cc?: string[];
  bcc?: string[];
  replyTo?: string;
  headers?: Record<string, string>;
  tags?: string[];
  attachments?: { filename: string; content: string; contentType?: string }[];
  scheduledAt?: string;
  /** Refuse (422 template_error) instead of warning when a placeholder has no value and no fallback. */
  strict?: boolean;
}

export const SEND_LIMITS = {
  subjectBytes: 998,
  bodyBytes: 2 * 1024 * 1024,
  /** Decoded; base64 makes it about 9.4 MB of JSON, inside the 10 MB body limit. */
  attachmentsBytes: 7 * 1024 * 1024,
  scheduleDays: 30,
  batchSize: 500,
};

export interface CheckedAddresses {
  to: EmailAddress;
  from: EmailAddress;
}

/** Every address in the request parsed with a real parser; all failures reported together. */
export function checkAddresses(req: SendRequest): CheckedAddresses {
  const errors: FieldError[] = [];
  const check = (field: string, value: string): EmailAddress | null => {
    const r = parseEmailAddress(value);
    if (!r.ok) errors.push({ field, message: r.message });
    // A UTF-8 local part (josé@example.org) travels only over SMTPUTF8, end to end, and most
    // receiving servers do not offer it: refused here rather than failed later (docs/sending.md).
    else if (!isAsciiLocalPart(r.value.local)) {
      errors.push({ field, message: 'internationalised (non-ASCII) local parts are not supported; the domain may be internationalised' });
      return null;
    }
    return r.ok ? r.value : null;
  };
  const to = check('to', req.to);
  const from = check('from.email', req.from.email);
  req.cc?.forEach((a, i) => check(`cc[${i}]`, a));
  req.bcc?.forEach((a, i) => check(`bcc[${i}]`, a));
  if (req.replyTo !== undefined) check('replyTo', req.replyTo);
  if (errors.length > 0 || !to || !from) {
    throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  }
  return { to, from };
}

/**
 * A subject with CR or LF as sent is refused (docs/architecture.md#sending: never passed through). Values
 * rendered into it are different: the template language folds their line breaks to spaces.
 */
export function checkRawSubject(req: SendRequest): void {
  if (req.subject !== undefined && /[\r\n]/.test(req.subject)) throw invalid('subject', 'must not contain CR or LF');
}

/** When to deliver: now, or `scheduledAt` (past times mean now; more than 30 days ahead is refused). */
export function checkSchedule(req: SendRequest, now: Date): Date | null {
  if (req.scheduledAt === undefined) return null;
  const at = new Date(req.scheduledAt);
  if (Number.isNaN(at.getTime())) throw invalid('scheduledAt', 'must be an ISO 8601 date-time');
  if (at.getTime() > now.getTime() + SEND_LIMITS.scheduleDays * 86_400_000) {
    throw invalid('scheduledAt', `must be at most ${SEND_LIMITS.scheduleDays} days ahead`);
  }
  return at.getTime() > now.getTime() ? at : null;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Attachments must be real base64 and stay under the total size limit once decoded. */
export function checkAttachments(req: SendRequest): void {
  let total = 0;
  req.attachments?.forEach((a, i) => {
    const content = a.content.replace(/\s+/g, '');
    if (content.length % 4 !== 0 || !BASE64.test(content)) throw invalid(`attachments[${i}].content`, 'must be base64');
    total += Buffer.byteLength(content, 'base64');
  });
  if (total > SEND_LIMITS.attachmentsBytes) {
    throw invalid('attachments', `total decoded size must be at most ${SEND_LIMITS.attachmentsBytes} bytes`);
  }
}

/** Rendered content must fit the limits and carry no header injection (CR/LF) anywhere. */
export function checkContent(req: SendRequest, content: { subject: string; html: string | null; text: string | null }): void {
  if (content.subject.trim() === '') throw invalid('subject', 'is required (in the request or the template)');
  if (Buffer.byteLength(content.subject) > SEND_LIMITS.subjectBytes) throw invalid('subject', `must be at most ${SEND_LIMITS.subjectBytes} bytes`);
  if (content.html === null && content.text === null) throw invalid('html', 'one of html, text or templateId is required');
  for (const part of ['html', 'text'] as const) {
    const v = content[part];
    if (v !== null && Buffer.byteLength(v) > SEND_LIMITS.bodyBytes) throw invalid(part, `must be at most ${SEND_LIMITS.bodyBytes} bytes`);
  }
  validateComposeInput({
    from: req.from,
    to: req.to,
    cc: req.cc,
    replyTo: req.replyTo,
    subject: content.subject,
    html: content.html ?? undefined,
    text: content.text ?? undefined,
    headers: req.headers,
    attachments: req.attachments?.map((a) => ({ filename: a.filename, content: Buffer.alloc(0), contentType: a.contentType })),
  });
  req.bcc?.forEach((b, i) => {
    if (/[\r\n]/.test(b)) throw invalid(`bcc[${i}]`, 'must not contain CR or LF');
  });
}
