import { selectSoftBounceRun, selectSuspendedRun } from '../../db/queries/bounces.js';
import type { Queryable } from '../../db/pool.js';
import type { BounceVerdict } from '../../mail/bounces/verdict.js';
import { suppressAddress } from '../audience/address-status.js';

/**
 * The 30-day rule (docs/bounces.md). A recipient-side soft bounce never suppresses on its
 * own: a full mailbox empties, a suspended account comes back. But an address that has
 * soft-bounced on every message sent to it for 30 days, at least three messages, with no
 * delivery, open or click in between, is treated as dead: mail to it has stopped arriving
 * and keeps costing reputation. It is suppressed as `hard_bounce` with the last reason.
 */
export const PERSISTENT_SOFT_BOUNCE_DAYS = 30;
export const PERSISTENT_SOFT_BOUNCE_MESSAGES = 3;

/**
 * The suspended rule (docs/bounces.md, docs/decisions/0027-bounce-evidence.md). A suspended or
 * disabled mailbox is soft the first time — providers lift suspensions, owners log back in —
 * but the third `suspended` bounce within 30 days, on three messages at least a day apart
 * from first to last, with no sign of life in between, suppresses it: the account is not
 * coming back, and every further send costs reputation with its provider.
 */
export const SUSPENDED_BOUNCES = 3;
export const SUSPENDED_WINDOW_DAYS = 30;
export const SUSPENDED_MIN_SPAN_MS = 86_400_000;

/** Whether this verdict can count toward the rule: recipient-side or undecided, never ours. */
export function countsTowardPersistence(v: BounceVerdict | null): boolean {
  return v !== null && !v.dead && (v.side === 'recipient' || v.side === 'unknown');
}

/** Call after recording a counting soft bounce, in the same transaction: both rules. Returns whether it suppressed. */
export async function suppressIfPersistentlySoft(db: Queryable, accountId: string, email: string, now: Date): Promise<boolean> {
  return (await suppressIfRepeatedlySuspended(db, accountId, email, now)) || suppressIfSoftForDays(db, accountId, email, now);
}

async function suppressIfRepeatedlySuspended(db: Queryable, accountId: string, email: string, now: Date): Promise<boolean> {
  const since = new Date(now.getTime() - SUSPENDED_WINDOW_DAYS * 86_400_000);
  const run = await selectSuspendedRun(db, accountId, email, since);
  if (run.messages < SUSPENDED_BOUNCES || !run.first || !run.last) return false;
  if (run.last.getTime() - run.first.getTime() < SUSPENDED_MIN_SPAN_MS) return false;
  const detail = `suspended on ${run.messages} messages within ${SUSPENDED_WINDOW_DAYS} days (since ${run.first.toISOString()})${run.lastDiagnostic ? `: ${run.lastDiagnostic}` : ''}`;
  await suppressAddress(db, accountId, email, 'hard_bounce', now, detail.slice(0, 2000), 'suspended');
  return true;
}

async function suppressIfSoftForDays(db: Queryable, accountId: string, email: string, now: Date): Promise<boolean> {
  const run = await selectSoftBounceRun(db, accountId, email);
  if (!run.first || run.messages < PERSISTENT_SOFT_BOUNCE_MESSAGES) return false;
  if (now.getTime() - run.first.getTime() < PERSISTENT_SOFT_BOUNCE_DAYS * 86_400_000) return false;
  const detail = `soft-bounced on every message for ${PERSISTENT_SOFT_BOUNCE_DAYS} days (${run.messages} messages since ${run.first.toISOString()})${run.lastDiagnostic ? `: ${run.lastDiagnostic}` : ''}`;
  await suppressAddress(db, accountId, email, 'hard_bounce', now, detail.slice(0, 2000), run.lastReason);
  return true;
}
