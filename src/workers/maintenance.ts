import { purgeRateLimitWindows } from '../db/queries/api-keys.js';
import { purgeIdempotencyKeys } from '../db/queries/idempotency.js';
import { purgeDeliveries } from '../db/queries/hooks.js';
import { purgeSignInState } from '../db/queries/sessions.js';
import { throttleWindowStart } from '../domain/users/throttle.js';
import type { Queryable } from '../db/pool.js';
import type { Clock } from '../clock.js';
import { rateWindowStart } from '../domain/keys/api-keys.js';
import { purgeTlsSessions } from '../db/queries/tls-reports.js';
import { purgeWarmupCounts } from '../db/queries/warmup.js';

export const DELIVERY_LOG_DAYS = 30;
/** TLS session counts are kept this long: a report covers one past day, the rest is for looking back. */
export const TLS_REPORT_DAYS = 30;

/**
 * One maintenance pass: drop idempotency records past 24 h, closed rate-limit windows and
 * webhook attempt logs older than 30 days, expired sessions and sign-in links, and sign-in
 * throttle windows no longer current, TLS-report counts older than 30 days, and warm-up
 * counts of days before yesterday (a cap counts today only).
 */
export async function runMaintenance(db: Queryable, clock: Clock): Promise<{ idempotency: number; rateWindows: number; hookDeliveries: number; signIn: number; tlsReportRows: number; warmupRows: number }> {
  const now = clock.now();
  const idempotency = await purgeIdempotencyKeys(db, now);
  const rateWindows = await purgeRateLimitWindows(db, rateWindowStart(now));
  const hookDeliveries = await purgeDeliveries(db, new Date(now.getTime() - DELIVERY_LOG_DAYS * 86_400_000));
  const signIn = await purgeSignInState(db, now, throttleWindowStart(now));
  const tlsReportRows = await purgeTlsSessions(db, new Date(now.getTime() - TLS_REPORT_DAYS * 86_400_000).toISOString().slice(0, 10));
  const warmupRows = await purgeWarmupCounts(db, new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10));
  return { idempotency, rateWindows, hookDeliveries, signIn, tlsReportRows, warmupRows };
}
