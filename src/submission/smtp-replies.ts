import { AppError, type ErrorCode } from '../errors.js';

/** An SMTP reply: the basic code, and the text that starts with the enhanced status code (RFC 3463). */
export interface SmtpReply {
  code: number;
  text: string;
}

/**
 * The SMTP reply for each error of the send pipeline: what the API answers with a problem
 * `code`, submission answers with a reply code and an enhanced status code a mail client or
 * MTA acts on (4xx: try again later; 5xx: do not). The problem code is named in the text, so
 * a log line can be looked up in docs/errors.md.
 */
const REPLIES: Partial<Record<ErrorCode, { code: number; status: string }>> = {
  unauthorized: { code: 535, status: '5.7.8' },
  sender_domain_unverified: { code: 550, status: '5.7.1' },
  recipient_suppressed: { code: 550, status: '5.7.1' },
  validation_failed: { code: 550, status: '5.6.0' },
  template_error: { code: 550, status: '5.6.0' },
  payload_too_large: { code: 552, status: '5.3.4' },
  rate_limited: { code: 451, status: '4.7.0' },
  // The quota resets on the 1st: a temporary refusal lets the client's queue send it then.
  quota_exceeded: { code: 452, status: '4.3.1' },
  account_at_risk: { code: 550, status: '5.7.1' },
};

/** One line, no control characters: the text goes into a reply line. */
function oneLine(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]+/g, ' ').slice(0, 400);
}

export function replyFor(err: unknown): SmtpReply {
  if (err instanceof AppError) {
    const r = REPLIES[err.code] ?? { code: 451, status: '4.3.0' };
    const retry = err.retryAfter !== undefined ? ` (retry in ${err.retryAfter} s)` : '';
    return { code: r.code, text: `${r.status} ${err.code}: ${oneLine(err.message)}${retry}` };
  }
  return { code: 451, text: '4.3.0 Temporary failure accepting the message, try again later' };
}

/** An Error as smtp-server sends it back: `responseCode` and the reply text. */
export function asSmtpError(reply: SmtpReply): Error & { responseCode: number } {
  return Object.assign(new Error(reply.text), { responseCode: reply.code });
}
