/**
 * The bounce-reason taxonomy (docs/bounces.md has the table of reasons and actions). Every
 * failed delivery, whether we learnt it from an SMTP reply or from a bounce mail, gets one
 * reason; the reason's side decides what happens to the address:
 *
 * - dead: the address itself is gone → hard bounce, suppressed;
 * - recipient: the mailbox or its system has a problem that may pass → soft bounce, never
 *   suppressed on its own (see the 30-day rule in domain/bounces/persistent.ts);
 * - sender: the receiver refused *us* (our IP, our authentication, our message) → never
 *   suppresses the recipient, shown in the account's health instead;
 * - unknown: `undefined`, treated as recipient-side.
 */

export const DEAD_REASONS = ['user_unknown', 'host_unknown', 'has_moved', 'not_accept'] as const;
export const RECIPIENT_REASONS = [
  'mailbox_full', 'exceed_limit', 'suspended', 'mesg_too_big', 'expired', 'system_error', 'system_full', 'network_error',
  'too_many_conn', 'rate_limited', 'mailer_error',
] as const;
export const SENDER_REASONS = [
  'blocked', 'spam_detected', 'filtered', 'policy_violation', 'content_error', 'security_error', 'auth_failure', 'rejected',
  'no_relaying', 'syntax_error',
] as const;

export const BOUNCE_REASONS = [...DEAD_REASONS, ...RECIPIENT_REASONS, ...SENDER_REASONS, 'undefined'] as const;
export type BounceReason = (typeof BOUNCE_REASONS)[number];

export type ReasonSide = 'dead' | 'recipient' | 'sender' | 'unknown';

export function sideOf(reason: BounceReason): ReasonSide {
  if ((DEAD_REASONS as readonly string[]).includes(reason)) return 'dead';
  if ((SENDER_REASONS as readonly string[]).includes(reason)) return 'sender';
  if (reason === 'undefined') return 'unknown';
  return 'recipient';
}

export function isBounceReason(value: unknown): value is BounceReason {
  return typeof value === 'string' && (BOUNCE_REASONS as readonly string[]).includes(value);
}
