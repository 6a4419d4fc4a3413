import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';
import {
  authenticateSessionAndCount, deleteSession, extendSession, insertSession,
} from '../../db/queries/sessions.js';
import { consumeSignInLink, findUserByEmail, type UserRow } from '../../db/queries/users.js';
import { AppError } from '../../errors.js';
import { rateWindowStart, type AuthContext } from '../keys/api-keys.js';
import { verifyPassword } from './passwords.js';
import { assertNotThrottled, recordFailure, recordSuccess, throttleBuckets } from './throttle.js';
import { hashToken, parseUserEmail } from './users.js';

/** Idle sessions end after 7 days; every session ends 30 days after sign-in (sessions.ts SQL). */
export const SESSION_IDLE_MS = 7 * 86_400_000;
export const SESSION_COOKIE = 'postline_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface NewSession {
  token: string;
  csrfToken: string;
  expiresAt: Date;
  user: UserRow;
}

async function openSession(db: Queryable, user: UserRow, now: Date): Promise<NewSession> {
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const expiresAt = new Date(now.getTime() + SESSION_IDLE_MS);
  await insertSession(db, { hash: hashToken(token), userId: user.id, csrfToken, at: now, expiresAt });
  return { token, csrfToken, expiresAt, user };
}

/** Email + password, throttled per address and per IP; every failure says the same thing. */
export async function signInWithPassword(db: Queryable, input: { email: string; password: string }, ip: string, now: Date): Promise<NewSession> {
  // Not an address at all: a 422 before any password check, so nothing to throttle.
  const key = parseUserEmail(input.email).key;
  const buckets = throttleBuckets(key, ip);
  await assertNotThrottled(db, buckets, now);
  const user = await findUserByEmail(db, key);
  const ok = await verifyPassword(user?.password_hash ?? null, input.password);
  if (!user || !ok) {
    await recordFailure(db, buckets, now);
    throw new AppError('unauthorized', 'Wrong email or password');
  }
  await recordSuccess(db, buckets);
  return openSession(db, user, now);
}

/** A one-time link from first start or `postline users reset-password --link`. */
export async function signInWithLink(db: Queryable, token: string, ip: string, now: Date): Promise<NewSession> {
  const buckets = throttleBuckets('link', ip);
  await assertNotThrottled(db, { address: buckets.ip, ip: buckets.ip }, now);
  const user = await consumeSignInLink(db, hashToken(token), now);
  if (!user) {
    await recordFailure(db, { address: buckets.ip, ip: buckets.ip }, now);
    throw new AppError('unauthorized', 'This sign-in link is unknown, expired or already used; ask for a new one with `postline users reset-password --link`');
  }
  return openSession(db, user, now);
}

export interface SessionAuth extends AuthContext {
  userId: string;
  email: string;
  csrfToken: string;
  sessionHash: Buffer;
  expiresAt: Date;
}

/** Whether a request was made with a signed-in user's session cookie (not an API key). */
export function isSessionAuth(auth: AuthContext): auth is SessionAuth {
  return auth.via === 'session';
}

/** Resolves a session cookie and counts the request in the account's live rate-limit window. */
export async function authenticateSession(db: Queryable, token: string, now: Date): Promise<SessionAuth> {
  const hash = hashToken(token);
  const row = await authenticateSessionAndCount(db, hash, now, rateWindowStart(now));
  if (!row) throw new AppError('unauthorized', 'Your session has ended; sign in again');
  if (now.getTime() - row.last_seen_at.getTime() > 60_000) {
    extendSession(db, hash, now, new Date(now.getTime() + SESSION_IDLE_MS)).catch(() => {}); // best effort
  }
  return {
    accountId: row.account_id,
    accountName: row.account_name,
    monthlyQuota: row.monthly_quota,
    keyId: null,
    mode: 'live',
    prefix: null,
    windowCount: row.window_count,
    via: 'session',
    userId: row.user_id,
    email: row.email,
    csrfToken: row.csrf_token,
    sessionHash: hash,
    expiresAt: row.expires_at,
  };
}

export function csrfMatches(expected: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function signOut(db: Queryable, sessionHash: Buffer): Promise<void> {
  await deleteSession(db, sessionHash);
}
