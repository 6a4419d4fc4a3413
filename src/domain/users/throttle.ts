import type { Queryable } from '../../db/pool.js';
import { clearSignInFailures, recordSignInFailure, signInFailures } from '../../db/queries/sessions.js';
import { AppError } from '../../errors.js';

/**
 * Sign-in throttling: failed attempts are counted per address and per client IP in fixed
 * 15-minute windows in PostgreSQL (so every API process agrees). Past the limit the sign-in
 * is refused with 429 before the password is even checked, so guessing costs the attacker
 * the whole window. Per address stops a slow guess at one account from many IPs; per IP
 * stops one client spraying many addresses.
 */
export const THROTTLE_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_ADDRESS = 10;
export const MAX_FAILURES_PER_IP = 50;

export function throttleWindowStart(now: Date): Date {
  return new Date(Math.floor(now.getTime() / THROTTLE_WINDOW_MS) * THROTTLE_WINDOW_MS);
}

export function throttleBuckets(emailKey: string, ip: string): { address: string; ip: string } {
  return { address: `email:${emailKey}`, ip: `ip:${ip}` };
}

export async function assertNotThrottled(db: Queryable, b: { address: string; ip: string }, now: Date): Promise<void> {
  const start = throttleWindowStart(now);
  const counts = await signInFailures(db, [b.address, b.ip], start);
  const retryAfter = Math.max(1, Math.ceil((start.getTime() + THROTTLE_WINDOW_MS - now.getTime()) / 1000));
  if ((counts.get(b.address) ?? 0) >= MAX_FAILURES_PER_ADDRESS) {
    throw new AppError('rate_limited', `Too many failed sign-ins for this address; try again in ${Math.ceil(retryAfter / 60)} minutes`, { retryAfter });
  }
  if ((counts.get(b.ip) ?? 0) >= MAX_FAILURES_PER_IP) {
    throw new AppError('rate_limited', `Too many failed sign-ins from this address (IP); try again in ${Math.ceil(retryAfter / 60)} minutes`, { retryAfter });
  }
}

export async function recordFailure(db: Queryable, b: { address: string; ip: string }, now: Date): Promise<void> {
  await recordSignInFailure(db, [b.address, b.ip], throttleWindowStart(now));
}

export async function recordSuccess(db: Queryable, b: { address: string }): Promise<void> {
  await clearSignInFailures(db, b.address);
}
