/**
 * Every outcome of a delivery attempt becomes one DeliveryResult value (as Postal's sender
 * does): delivered, deferred (retry on the backoff schedule) or hard_bounce (stop; suppress
 * the recipient unless the failure was ours). Nothing here throws.
 *
 * Rules (DESIGN.md §8): 2xx → delivered; 4xx, connection failures, timeouts and temporary
 * DNS failures → deferred; 5xx → hard_bounce. Exceptions, each for a stated reason:
 * - 503 (bad sequence) says the session was confused, not that the message was refused → deferred.
 * - A relay rejecting our credentials (EAUTH, 535) is our configuration → deferred, never a bounce.
 * - NXDOMAIN, null MX (RFC 7505) and "no MX and no address" are permanent answers → hard_bounce.
 */
import type { MxFailure } from './dns.js';

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
}

export interface HardBounce {
  kind: 'hard_bounce';
  response: string;
  code: number | null;
  enhanced: string | null;
  mx: string | null;
  /** Sender-side failure (authentication, reputation, our message): do not suppress the recipient. */
  ourFault: boolean;
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

/** RFC 7372 codes for sender authentication (5.7.20–5.7.27: DKIM, SPF, reverse DNS, MX of sender), plus 5.7.28 mail flood. */
const SENDER_ENHANCED = /^5\.7\.(2[0-8])$/;
const AUTH_WORDING = /authenticat|\bdmarc\b|\bspf\b|\bdkim\b|reverse dns|\brdns\b|\bptr\b|\bspam\b|sender policy/i;
const REPUTATION_WORDING = /blocklist|blacklist|block list|black list|spamhaus|\brbl\b|dnsbl|blocked using|reputation|poor sender|your ip|sending ip/i;

/**
 * Did the receiver refuse the message because of us (our authentication, our IP's
 * reputation, our message's size or content) rather than because the address is bad?
 * Such a bounce must not suppress the recipient.
 */
export function isSenderFault(response: string, enhanced: string | null, command?: string): boolean {
  if (enhanced && SENDER_ENHANCED.test(enhanced)) return true;
  if (enhanced === '5.3.4' || enhanced?.startsWith('5.6.')) return true; // too big / bad content
  if (REPUTATION_WORDING.test(response)) return true;
  if ((enhanced === null || enhanced.startsWith('5.7.')) && AUTH_WORDING.test(response)) return true;
  return command === 'CONN'; // refused at the greeting: the server will not talk to us at all
}

export function classifySmtpReply(code: number, response: string, mx: string | null, command?: string): DeliveryResult {
  const enhanced = parseEnhancedCode(response);
  if (code >= 200 && code < 300) return { kind: 'delivered', response, mx };
  if (code >= 500 && code < 600 && code !== 503) {
    return { kind: 'hard_bounce', response, code, enhanced, mx, ourFault: isSenderFault(response, enhanced, command) };
  }
  return {
    kind: 'deferred',
    response,
    code,
    enhanced,
    retryAfterSeconds: parseRetryAfterSeconds(response),
    mx,
    hostFailure: code === 421 || command === 'CONN' || command === 'EHLO' || command === 'HELO',
  };
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/** A nodemailer send error (or anything thrown while sending) to a result. */
export function classifySmtpError(err: unknown, mx: string | null): DeliveryResult {
  const e = (err ?? {}) as SmtpErrorLike;
  const response = (e.response ?? e.message ?? String(err)).trim();
  if (e.code === 'EAUTH' || e.code === 'ENOAUTH') {
    return { kind: 'deferred', response, code: e.responseCode ?? null, enhanced: parseEnhancedCode(response) ?? '4.7.0', mx, hostFailure: true };
  }
  if (typeof e.responseCode === 'number' && e.response) {
    return classifySmtpReply(e.responseCode, e.response.trim(), mx, e.command);
  }
  if (e.code === 'EMESSAGE' && /size/i.test(response)) {
    return { kind: 'hard_bounce', response, code: null, enhanced: '5.3.4', mx, ourFault: true };
  }
  if (e.code === 'EENVELOPE') {
    // Refused by nodemailer before it reached the server (malformed address): our data.
    return { kind: 'hard_bounce', response, code: null, enhanced: null, mx, ourFault: true };
  }
  const sys = e.originalCode ?? e.code ?? '';
  const enhanced = UNREACHABLE.has(sys) ? '4.4.1' : e.code === 'EDNS' || sys === 'ENOTFOUND' ? '4.4.3' : '4.4.2';
  return { kind: 'deferred', response: sys && !response.includes(sys) ? `${response} (${sys})` : response, code: null, enhanced, mx, hostFailure: true };
}

/** The recipient domain's MX lookup failed: no SMTP conversation happened. */
export function classifyMxFailure(failure: MxFailure): DeliveryResult {
  switch (failure.kind) {
    case 'temp':
      return { kind: 'deferred', response: failure.message, code: null, enhanced: '4.4.3', mx: null, hostFailure: false };
    case 'null_mx':
      return { kind: 'hard_bounce', response: failure.message, code: null, enhanced: '5.1.10', mx: null, ourFault: false };
    case 'nxdomain':
    case 'no_mx':
      return { kind: 'hard_bounce', response: failure.message, code: null, enhanced: '5.1.2', mx: null, ourFault: false };
  }
}
