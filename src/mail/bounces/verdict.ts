/**
 * One classification for every failure we learn about: the SMTP reply our delivery engine
 * got (src/mail/classify.ts) and each recipient of a bounce mail (./read.ts) both end here.
 * Evidence, most specific first: the providers' wording of the diagnostic (./phrases.ts),
 * then the enhanced status code (RFC 3463), then the basic reply code (RFC 5321).
 *
 * Wording comes first because status codes are used loosely: Office 365 says 5.1.10 (null
 * MX by RFC 7505) for an unknown recipient and 5.4.1 for a directory rejection, Outlook.com
 * and Yahoo put 5.7.1 / 5.1.1 in front of IP blocks, and 5.0.0 / 5.5.0 say nothing at all.
 * Nothing here throws.
 */
import { FALLBACK_PHRASES, REASON_PHRASES, TOKEN_PHRASES } from './phrases.js';
import { sideOf, type BounceReason, type ReasonSide } from './reasons.js';

export interface BounceFacts {
  /** Enhanced status code, `5.1.1`. */
  status?: string | null;
  /** Basic SMTP reply code, 550. */
  reply?: number | null;
  /** The diagnostic text (the SMTP reply, or what the bounce says in words). */
  diagnostic?: string | null;
  /** DSN Action (failed, delayed, delivered…), when known. */
  action?: string | null;
}

export interface BounceVerdict {
  reason: BounceReason;
  side: ReasonSide;
  /** The failure is final for this message: a 5.x.x / 5xx, or a bounce that gave up. */
  permanent: boolean;
  /** The address itself is gone: permanent and a dead-side reason. Only this suppresses. */
  dead: boolean;
  /** The status the verdict used: the given one, else one read from the diagnostic. */
  status: string | null;
  reply: number | null;
}

const ENHANCED = /(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.]*\d)/;
const REPLY = /(?<![\d.#-])([245][0-5]\d)(?=[ -]|$)/m;

/** The first enhanced status code in a text ("550-5.7.26 …", "#5.1.1", "(#5.1.1)", "smtp;550 5.1.1"). */
export function findEnhancedStatus(text: string | null | undefined): string | null {
  if (!text) return null;
  const m = ENHANCED.exec(text);
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : null;
}

/** The first basic reply code standing at a word boundary (550, 452-…), not part of a status or a date. */
export function findReplyCode(text: string | null | undefined): number | null {
  if (!text) return null;
  const m = REPLY.exec(text);
  return m ? Number(m[1]) : null;
}

/** Blanks what could match a phrase by accident: addresses, URLs, host names. */
function neutralise(text: string): string {
  return text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, ' ')
    .replace(/[^\s<>()[\]"',;:]+@[^\s<>()[\]"',;:]+/g, ' ')
    .replace(/\b(?:[a-z0-9-]+\.)+[a-z]{2,}\b\.?/gi, ' ')
    .replace(/\s+/g, ' ');
}

/** The reason the wording gives, or null. */
export function reasonFromText(text: string | null | undefined): BounceReason | null {
  if (!text) return null;
  const capped = text.length > 8000 ? text.slice(0, 8000) : text;
  for (const [reason, re] of TOKEN_PHRASES) if (re.test(capped)) return reason;
  const plain = neutralise(capped);
  for (const [reason, re] of REASON_PHRASES) if (re.test(plain)) return reason;
  for (const [reason, re] of FALLBACK_PHRASES) if (re.test(plain)) return reason;
  return null;
}

/** RFC 3463 subject.detail → reason. Codes that carry no information (x.0.0) map to nothing. */
const STATUS_REASONS: Record<string, BounceReason> = {
  '1.1': 'user_unknown', '1.2': 'host_unknown', '1.3': 'user_unknown', '1.4': 'user_unknown', '1.5': 'user_unknown',
  '1.6': 'has_moved', '1.7': 'rejected', '1.8': 'rejected', '1.9': 'rejected', '1.10': 'not_accept',
  '2.1': 'suspended', '2.2': 'mailbox_full', '2.3': 'exceed_limit', '2.4': 'system_error',
  '3.0': 'system_error', '3.1': 'system_full', '3.2': 'system_error', '3.3': 'content_error', '3.4': 'mesg_too_big', '3.5': 'system_error',
  '4.0': 'network_error', '4.1': 'network_error', '4.2': 'network_error', '4.3': 'system_error', '4.4': 'host_unknown', '4.5': 'too_many_conn',
  '4.6': 'system_error', '4.7': 'expired',
  '5.0': 'syntax_error', '5.1': 'syntax_error', '5.2': 'syntax_error', '5.3': 'exceed_limit', '5.4': 'syntax_error', '5.5': 'syntax_error', '5.6': 'rejected',
  '6.0': 'content_error', '6.1': 'content_error', '6.2': 'content_error', '6.3': 'content_error', '6.4': 'content_error', '6.5': 'content_error',
  '6.6': 'content_error', '6.7': 'rejected', '6.8': 'rejected', '6.9': 'rejected', '6.10': 'content_error',
  '7.0': 'security_error', '7.1': 'policy_violation', '7.2': 'policy_violation', '7.3': 'security_error', '7.4': 'security_error', '7.5': 'security_error',
  '7.6': 'security_error', '7.7': 'security_error', '7.8': 'security_error', '7.9': 'security_error', '7.10': 'security_error', '7.11': 'security_error',
  '7.12': 'security_error', '7.13': 'suspended', '7.14': 'security_error', '7.15': 'security_error', '7.16': 'mesg_too_big', '7.17': 'suspended',
  '7.18': 'suspended', '7.19': 'security_error', '7.20': 'auth_failure', '7.21': 'auth_failure', '7.22': 'auth_failure', '7.23': 'auth_failure',
  '7.24': 'auth_failure', '7.25': 'blocked', '7.26': 'auth_failure', '7.27': 'rejected', '7.28': 'blocked', '7.29': 'auth_failure', '7.30': 'security_error',
};

export function reasonFromStatus(status: string | null): BounceReason | null {
  if (!status) return null;
  const [, subject, detail] = status.split('.');
  return STATUS_REASONS[`${subject}.${detail}`] ?? null;
}

/** Basic reply codes, for replies without an enhanced code and without telling words. */
function reasonFromReply(reply: number | null): BounceReason | null {
  switch (reply) {
    case 421: return 'system_error';
    case 450: return 'system_error';
    case 451: return 'system_error';
    case 452: return 'system_full';
    case 500: case 501: case 502: case 503: case 504: case 555: return 'syntax_error';
    case 551: return 'has_moved';
    case 552: return 'mailbox_full';
    default: return null;
  }
}

const TEMPORARY_ACTIONS = new Set(['delayed']);
const DELIVERED_ACTIONS = new Set(['delivered', 'relayed', 'expanded']);

export function classifyBounce(facts: BounceFacts): BounceVerdict {
  const diagnostic = facts.diagnostic ?? null;
  const reply = facts.reply ?? findReplyCode(diagnostic);
  const status = normaliseStatus(facts.status) ?? findEnhancedStatus(diagnostic);
  const action = facts.action?.toLowerCase() ?? null;
  const cls = status ? status[0] : reply ? String(reply)[0] : null;
  let reason =
    reasonFromText(diagnostic) ??
    // x.0.0 says nothing; the reply code may (552 → storage).
    (status && !/^\d\.0\.0$/.test(status) ? reasonFromStatus(status) : null) ??
    reasonFromReply(reply) ??
    'undefined';
  // Retried until the sender's queue gave up: the reason is the last error, or "expired".
  if (reason === 'undefined' && action === 'failed' && cls === '4') reason = 'expired';
  const settled = action !== null && (TEMPORARY_ACTIONS.has(action) || DELIVERED_ACTIONS.has(action));
  const permanent = !settled && (cls === '5' || action === 'failed');
  const side = sideOf(reason);
  // A dead address needs a permanent answer of the 5 class (or a failure that said no class at all).
  const dead = side === 'dead' && permanent && cls !== '4';
  return { reason, side, permanent, dead, status, reply };
}

function normaliseStatus(status: string | null | undefined): string | null {
  const m = status ? /^\s*([245])\.(\d{1,3})\.(\d{1,3})/.exec(status) : null;
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : null;
}
