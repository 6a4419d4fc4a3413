import type { Queryable } from '../../db/pool.js';
import { exitRunsOnUnsubscribe, fireBuiltInEvent } from '../automations/trigger.js';
import { applySuppressionToSubscribers, reactivateSubscribers } from './subscribers.js';
import { suppress, suppressMany, unsuppress, type SuppressionEntry, type SuppressionReason } from '../suppression.js';

/**
 * The one place an address's standing changes for an account. Hard bounces, complaints,
 * unsubscribes and the re-subscribe operation all come through here, so the suppression list
 * and the subscribers' statuses never disagree. Pass a transaction client.
 */
export async function suppressAddress(
  db: Queryable,
  accountId: string,
  email: string,
  reason: SuppressionReason,
  at: Date,
  detail: string | null = null,
  bounceReason: string | null = null,
): Promise<{ entry: SuppressionEntry; created: boolean }> {
  const result = await suppress(db, accountId, email, reason, { now: at, detail, bounceReason });
  await applySuppressionToSubscribers(db, accountId, email, reason, at);
  await leaveAutomations(db, accountId, email, reason, at);
  return result;
}

/** DELETE /api/v1/suppression: removes the entry; null when the address was not suppressed. */
export async function resubscribeAddress(db: Queryable, accountId: string, email: string, at: Date = new Date()): Promise<SuppressionEntry | null> {
  const entry = await unsuppress(db, accountId, email);
  if (entry) await reactivateSubscribers(db, accountId, entry.email, at);
  return entry;
}

/**
 * The bulk add: one statement for the list, then the subscriber statuses for the entries whose
 * reason implies one (unsubscribe, complaint, hard bounce; manual and import change nothing).
 */
export async function suppressManyAddresses(
  db: Queryable,
  accountId: string,
  entries: readonly { email: string; reason?: SuppressionReason }[],
  defaultReason: SuppressionReason | undefined,
  at: Date,
): Promise<{ created: number; existing: number }> {
  const result = await suppressMany(db, accountId, entries, { defaultReason, now: at });
  for (const e of entries) {
    const reason = e.reason ?? defaultReason ?? 'manual';
    if (reason === 'unsubscribe' || reason === 'complaint' || reason === 'hard_bounce') {
      await applySuppressionToSubscribers(db, accountId, e.email, reason, at);
    }
    await leaveAutomations(db, accountId, e.email, reason, at);
  }
  return result;
}

/**
 * An unsubscribe or complaint ends the address's automation runs; an unsubscribe also fires
 * the built-in subscriber.unsubscribed event (docs/automations.md).
 */
async function leaveAutomations(db: Queryable, accountId: string, email: string, reason: SuppressionReason, at: Date): Promise<void> {
  if (reason !== 'unsubscribe' && reason !== 'complaint') return;
  await exitRunsOnUnsubscribe(db, accountId, email, reason, at);
  if (reason === 'unsubscribe') await fireBuiltInEvent(db, accountId, 'subscriber.unsubscribed', email, { reason: 'unsubscribe' }, at);
}
