import type { Queryable } from '../db/pool.js';
import { suppress, unsuppress, type SuppressionEntry, type SuppressionReason } from './suppression.js';

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
): Promise<{ entry: SuppressionEntry; created: boolean }> {
  return suppress(db, accountId, email, reason, { now: at, detail });
}

/** DELETE /api/v1/suppression: removes the entry; null when the address was not suppressed. */
export async function resubscribeAddress(db: Queryable, accountId: string, email: string): Promise<SuppressionEntry | null> {
  return unsuppress(db, accountId, email);
}
