import { purgeRateLimitWindows } from '../db/queries/apiKeys.js';
import { purgeIdempotencyKeys } from '../db/queries/idempotency.js';
import { purgeDeliveries } from '../db/queries/hooks.js';
import type { Queryable } from '../db/pool.js';
import type { Clock } from '../clock.js';
import { rateWindowStart } from '../domain/apiKeys.js';

export const DELIVERY_LOG_DAYS = 30;

/**
 * One maintenance pass: drop idempotency records past 24 h, closed rate-limit windows and
 * webhook attempt logs older than 30 days.
 */
export async function runMaintenance(db: Queryable, clock: Clock): Promise<{ idempotency: number; rateWindows: number; hookDeliveries: number }> {
  const now = clock.now();
  const idempotency = await purgeIdempotencyKeys(db, now);
  const rateWindows = await purgeRateLimitWindows(db, rateWindowStart(now));
  const hookDeliveries = await purgeDeliveries(db, new Date(now.getTime() - DELIVERY_LOG_DAYS * 86_400_000));
  return { idempotency, rateWindows, hookDeliveries };
}
