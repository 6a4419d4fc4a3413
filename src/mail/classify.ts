/**
 * Every outcome of a delivery attempt becomes one DeliveryResult value (as Postal's sender
 * does): delivered, deferred (retry on the backoff schedule) or hard_bounce (a permanent
 * failure: stop). Each failure carries the bounce verdict of ./bounces/verdict.ts — the
 * same classification bounce mails get — and only a dead address is suppressed
 * (docs/bounces.md). Nothing here throws.
 *
 * Rules (docs/architecture.md#delivery): 2xx → delivered; 4xx, connection failures, timeouts and temporary
 * DNS failures → deferred; 5xx → hard_bounce. Exceptions, each for a stated reason:
 * - 503 (bad sequence) says the session was confused, not that the message was refused → deferred.
 * - A relay rejecting our credentials (EAUTH, 535) is our configuration → deferred, never a bounce.
 * - NXDOMAIN, null MX (RFC 7505) and "no MX and no address" are permanent answers → hard_bounce.
 */
import { classifyBounce, type BounceVerdict } from './bounces/verdict.js';
import { hostFamily } from './bounces/dialect.js';
import { sideOf, type BounceReason } from './bounces/reasons.js';
import type { MxFailure } from './dns.js';
import type { CertificateFailure } from './tls-failure.js';

export interface Delivered {
  kind: 'delivered';
  response: string;
  mx: string | null;
}

export interface Deferred {
  kind: 'deferred';
  response: string;
  /** SMTP reply code; null when there was no reply (connection failure, timeout, DNS). */
  code: number | null;
  /** RFC 3463 code from the reply; for failures without a reply, the matching X.4.x code. */
  enhanced: string | null;
  /** From a hint in the reply ("try again in 5 minutes"), if any. */
  retryAfterSeconds?: number;
  mx: string | null;
  /** The failure concerns the host (unreachable, 421, greeting): another MX may do better. */
  hostFailure: boolean;
  verdict: BounceVerdict;
  /** A session that had to be TLS-verified (MTA-STS) failed at STARTTLS or the certificate. */
  tlsFailure?: { result: 'starttls-not-supported' | CertificateFailure; detail: string };
}

export interface HardBounce {
  kind: 'hard_bounce';
  response: string;
  code: number | null;
  enhanced: string | null;
  mx: string | null;
  /** Sender-side failure (authentication, reputation, our message): do not suppress the recipient. */
  ourFault: boolean;
  /** Why, by the bounce taxonomy; `verdict.dead` alone suppresses the recipient. */
  verdict: BounceVerdict;
}

export type DeliveryResult = Delivered | Deferred | HardBounce;

/** The properties nodemailer puts on its errors (NodemailerError). */
export interface SmtpErrorLike {
  code?: string;
  originalCode?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  message?: string;
}

/** "550-5.7.26 …" / "452 4.2.2 …": the enhanced code right after the reply code. */
export function parseEnhancedCode(response: string): string | null {
  const m = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(response.trim());
  return m ? m[1] : null;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** A retry delay the server suggests: "try again in 5 minutes", "greylisted for 300 seconds". */
export function parseRetryAfterSeconds(response: string): number | undefined {
  const m = /\b(?:try(?:ing)? again|retry|wait|greylist(?:ed|ing)?|deferred)\b[^0-9\n]{0,24}?(\d{1,6})\s*(s(?:ec(?:ond)?s?)?|m(?:in(?:ute)?s?)?|h(?:(?:ou)?rs?)?)\b/i.exec(response);
  if (!m) return undefined;
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2][0].toLowerCase()];
  return seconds > 0 ? Math.min(seconds, 24 * 3600) : undefined;
}

/**
 * The verdict for one reply. A server that refuses us at the greeting (command CONN) will not
 * talk to us at all, whoever the recipient: blocked, unless its words say something else
 * of the sender's side.
 */
export function verdictOf(code: number | null, response: string, enhanced: string | null, command?: string, mx?: string | null): BounceVerdict {
  const verdict = classifyBounce({ status: enhanced, reply: code, diagnostic: response, dialect: hostFamily(mx) });
  if (command === 'CONN' && verdict.side !== 'sender') return { ...verdict, reason: 'blocked', side: 'sender', dead: false, ourFault: true };
  return verdict;
}

/** A verdict we decide ourselves (no reply to read): DNS answers, our own refusals. */
export function fixedVerdict(reason: BounceReason, status: string | null, permanent: boolean): BounceVerdict {
  const side = sideOf(reason);
  return { reason, side, permanent, dead: permanent && side === 'dead', ourFault: side === 'sender', status, reply: null };
}

export function classifySmtpReply(code: number, response: string, mx: string | null, command?: string): DeliveryResult {
  const enhanced = parseEnhancedCode(response);
  if (code >= 200 && code < 300) return { kind: 'delivered', response, mx };
  if (code >= 500 && code < 600 && code !== 503) {
    const verdict = verdictOf(code, response, enhanced, command, mx);
    return { kind: 'hard_bounce', response, code, enhanced, mx, ourFault: verdict.ourFault, verdict };
  }
  return {
    kind: 'deferred',
    response,
    code,
    enhanced,
    retryAfterSeconds: parseRetryAfterSeconds(response),
    mx,
    hostFailure: code === 421 || command === 'CONN' || command === 'EHLO' || command === 'HELO',
    verdict: verdictOf(code, response, enhanced, command, mx),
  };
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/** A nodemailer send error (or anything thrown while sending) to a result. */
export function classifySmtpError(err: unknown, mx: string | null): DeliveryResult {
  const e = (err ?? {}) as SmtpErrorLike;
  const response = (e.response ?? e.message ?? String(err)).trim();
  if (e.code === 'EAUTH' || e.code === 'ENOAUTH') {
    const enhanced = parseEnhancedCode(response) ?? '4.7.0';
    return { kind: 'deferred', response, code: e.responseCode ?? null, enhanced, mx, hostFailure: true, verdict: fixedVerdict('security_error', enhanced, false) };
  }
  if (typeof e.responseCode === 'number' && e.response) {
    return classifySmtpReply(e.responseCode, e.response.trim(), mx, e.command);
  }
  if (e.code === 'EMESSAGE' && /size/i.test(response)) {
    return { kind: 'hard_bounce', response, code: null, enhanced: '5.3.4', mx, ourFault: false, verdict: fixedVerdict('mesg_too_big', '5.3.4', true) };
  }
  if (e.code === 'EENVELOPE') {
    // Refused by nodemailer before it reached the server (malformed address): our data.
    return { kind: 'hard_bounce', response, code: null, enhanced: null, mx, ourFault: true, verdict: fixedVerdict('rejected', null, true) };
  }
  const sys = e.originalCode ?? e.code ?? '';
  const enhanced = UNREACHABLE.has(sys) ? '4.4.1' : e.code === 'EDNS' || sys === 'ENOTFOUND' ? '4.4.3' : '4.4.2';
  const text = sys && !response.includes(sys) ? `${response} (${sys})` : response;
  return { kind: 'deferred', response: text, code: null, enhanced, mx, hostFailure: true, verdict: fixedVerdict('network_error', enhanced, false) };
}

/** The recipient domain's MX lookup failed: no SMTP conversation happened. */
export function classifyMxFailure(failure: MxFailure): DeliveryResult {
  switch (failure.kind) {
    case 'temp':
      return { kind: 'deferred', response: failure.message, code: null, enhanced: '4.4.3', mx: null, hostFailure: false, verdict: fixedVerdict('network_error', '4.4.3', false) };
    case 'null_mx':
      return { kind: 'hard_bounce', response: failure.message, code: null, enhanced: '5.1.10', mx: null, ourFault: false, verdict: fixedVerdict('not_accept', '5.1.10', true) };
    case 'nxdomain':
    case 'no_mx':
      return { kind: 'hard_bounce', response: failure.message, code: null, enhanced: '5.1.2', mx: null, ourFault: false, verdict: fixedVerdict('host_unknown', '5.1.2', true) };
  }
}
