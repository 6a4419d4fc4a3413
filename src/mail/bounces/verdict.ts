/**
 * One classification for every failure we learn about: the SMTP reply our delivery engine
 * got (src/mail/classify.ts) and each recipient of a bounce mail (./read.ts) both end here.
 * Evidence, in order of trust (docs/bounces.md, docs/decisions/0027-bounce-evidence.md):
 *
 * 1. the MTA's dialect: vendor tokens that say exactly what they mean (./phrases/dialects.ts),
 *    and codes a family uses its own way (./dialect.ts: Office 365's 5.1.10 and 5.4.1);
 * 2. the diagnostic's wording, family by family (./phrases/), refusals of the sender first;
 * 3. the enhanced status code (RFC 3463), when it is specific;
 * 4. generic wording ("mailbox unavailable", "address rejected"), marked weak in the tables;
 * 5. the basic reply code (RFC 5321).
 *
 * Codes are used loosely — Office 365 says 5.1.10 (null MX by RFC 7505) for an unknown
 * recipient, receivers put 5.1.1 or 5.0.0 in front of IP blocks and DMARC failures — so
 * telling words beat the code, and a code beats words that tell little. Nothing here throws.
 */
import { reasonFromDialectStatus, type MtaFamily } from './dialect.js';
import { DIALECT_TOKENS, PHRASE_FAMILIES } from './phrases/index.js';
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
  /** The family of the MTA that wrote the diagnostic (./dialect.ts): some read codes their own way. */
  dialect?: MtaFamily | null;
}

export interface BounceVerdict {
  reason: BounceReason;
  side: ReasonSide;
  /** The failure is final for this message: a 5.x.x / 5xx, or a bounce that gave up. */
  permanent: boolean;
  /** The address itself is gone: permanent and a dead-side reason. Only this suppresses. */
  dead: boolean;
  /**
   * The receiver refused *us* (our IP, authentication, message, envelope): `side` is
   * `sender`. Never suppresses; counts toward the account's health and traffic shaping.
   */
  ourFault: boolean;
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

export interface TextReason {
  reason: BounceReason;
  /** Generic wording: decides only when the status says nothing specific. */
  weak: boolean;
}

/** Each family's phrases as one pattern per strength: one test per family instead of one per entry (4× faster). */
const union = (phrases: readonly { re: RegExp }[]) => (phrases.length === 0 ? null : new RegExp(phrases.map((p) => `(?:${p.re.source})`).join('|'), 'i'));
const COMPILED = PHRASE_FAMILIES.map((f) => ({
  reason: f.reason,
  strong: union(f.phrases.filter((p) => !p.weak)),
  weak: union(f.phrases.filter((p) => p.weak)),
}));

/** What the wording says: the first dialect token, else the first strong family phrase, else the first weak one. */
export function readWording(text: string | null | undefined): TextReason | null {
  if (!text) return null;
  const capped = text.length > 8000 ? text.slice(0, 8000) : text;
  for (const token of DIALECT_TOKENS) if (token.re.test(capped)) return { reason: token.reason, weak: false };
  const plain = neutralise(capped);
  for (const family of COMPILED) if (family.strong?.test(plain)) return { reason: family.reason, weak: false };
  for (const family of COMPILED) if (family.weak?.test(plain)) return { reason: family.reason, weak: true };
  return null;
}

/** The reason the wording gives, or null (weak wording included). */
export function reasonFromText(text: string | null | undefined): BounceReason | null {
  return readWording(text)?.reason ?? null;
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

/**
 * A status specific enough to beat generic wording: a detail other than 0 ("other or
 * undefined"), or the security/policy subject (x.7.x), which is never about a missing mailbox.
 */
function isSpecific(status: string): boolean {
  const [, subject, detail] = status.split('.');
  return detail !== '0' || subject === '7';
}

/** x.4.7: the reporting MTA's own queue gave up; whatever it last heard was temporary. */
const EXPIRED_STATUS = /^[45]\.4\.7$/;

function reasonOf(wording: TextReason | null, status: string | null, reply: number | null, dialect: MtaFamily | null): BounceReason {
  const fromStatus = reasonFromDialectStatus(dialect, status) ?? (status && !/^\d\.0\.0$/.test(status) ? reasonFromStatus(status) : null);
  if (wording && !wording.weak) {
    return EXPIRED_STATUS.test(status ?? '') && sideOf(wording.reason) === 'dead' ? 'expired' : wording.reason;
  }
  if (wording && status && fromStatus && isSpecific(status)) return fromStatus;
  // x.0.0 says nothing; the reply code may (552 → storage).
  return wording?.reason ?? fromStatus ?? reasonFromReply(reply) ?? 'undefined';
}

export function classifyBounce(facts: BounceFacts): BounceVerdict {
  const diagnostic = facts.diagnostic ?? null;
  const reply = facts.reply ?? findReplyCode(diagnostic);
  const status = normaliseStatus(facts.status) ?? findEnhancedStatus(diagnostic);
  const action = facts.action?.toLowerCase() ?? null;
  const cls = status ? status[0] : reply ? String(reply)[0] : null;
  let reason = reasonOf(readWording(diagnostic), status, reply, facts.dialect ?? null);
  // Retried until the sender's queue gave up: the reason is the last error, or "expired".
  if (reason === 'undefined' && action === 'failed' && cls === '4') reason = 'expired';
  const settled = action !== null && (TEMPORARY_ACTIONS.has(action) || DELIVERED_ACTIONS.has(action));
  const permanent = !settled && (cls === '5' || action === 'failed');
  const side = sideOf(reason);
  // A dead address needs a permanent answer of the 5 class (or a failure that said no class at all).
  const dead = side === 'dead' && permanent && cls !== '4';
  return { reason, side, permanent, dead, ourFault: side === 'sender', status, reply };
}

function normaliseStatus(status: string | null | undefined): string | null {
  const m = status ? /^\s*([245])\.(\d{1,3})\.(\d{1,3})/.exec(status) : null;
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : null;
}
