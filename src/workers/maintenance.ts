import { purgeRateLimitWindows } from '../db/queries/apiKeys.js';
import { purgeIdempotencyKeys } from '../db/queries/idempotency.js';
import type { Queryable } from '../db/pool.js';
import type { Clock } from '../clock.js';
import { rateWindowStart } from '../domain/apiKeys.js';

/** One maintenance pass: drop idempotency records past 24 h and closed rate-limit windows. */
export async function runMaintenance(db: Queryable, clock: Clock): Promise<{ idempotency: number; rateWindows: number }> {
  const now = clock.now();
  const idempotency = await purgeIdempotencyKeys(db, now);
  const rateWindows = await purgeRateLimitWindows(db, rateWindowStart(now));
  return { idempotency, rateWindows };
}
