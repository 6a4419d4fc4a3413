import type { Queryable } from '../pool.js';

export interface SessionRow {
  user_id: string;
  account_id: string;
  account_name: string;
  monthly_quota: number | null;
  email: string;
  csrf_token: string;
  expires_at: Date;
  last_seen_at: Date;
  window_count: number;
}

export async function insertSession(
  db: Queryable, s: { hash: Buffer; userId: string; csrfToken: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db.query(
    'INSERT INTO sessions (token_hash, user_id, csrf_token, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $4, $4, $5)',
    [s.hash, s.userId, s.csrfToken, s.at, s.expiresAt],
  );
}

/**
 * The cookie's hot path in one round trip, like API key auth: find the unexpired session and
 * its user and account, and count the request in the account's live rate-limit window (a
 * person in the dashboard shares the account's live budget).
 */
export async function authenticateSessionAndCount(db: Queryable, hash: Buffer, now: Date, windowStart: Date): Promise<SessionRow | null> {
  const { rows } = await db.query<SessionRow>(
    `WITH s AS (
       SELECT s.user_id, u.account_id, a.name AS account_name, a.monthly_quota, u.email, s.csrf_token, s.expires_at, s.last_seen_at
         FROM sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id
        WHERE s.token_hash = $1 AND s.expires_at > $2
     ), w AS (
       INSERT INTO rate_limit_windows (bucket, window_start, count)
       SELECT account_id || ':live', $3, 1 FROM s
       ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
       RETURNING count
     )
     SELECT s.*, w.count AS window_count FROM s, w`,
    [hash, now, windowStart],
  );
  return rows[0] ?? null;
}

// Sliding expiry, written at most once a minute per session (see domain/users/sessions.ts).
export async function extendSession(db: Queryable, hash: Buffer, at: Date, expiresAt: Date): Promise<void> {
  await db.query('UPDATE sessions SET last_seen_at = $2, expires_at = least($3, created_at + interval \'30 days\') WHERE token_hash = $1', [hash, at, expiresAt]);
}

export async function deleteSession(db: Queryable, hash: Buffer): Promise<void> {
  await db.query('DELETE FROM sessions WHERE token_hash = $1', [hash]);
}

// A password change or reset signs the user out everywhere else.
export async function deleteSessionsOfUser(db: Queryable, userId: string, except: Buffer | null): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM sessions WHERE user_id = $1 AND token_hash IS DISTINCT FROM $2', [userId, except]);
  return rowCount ?? 0;
}

// Failures in the current window for each bucket asked about (absent buckets count 0).
export async function signInFailures(db: Queryable, buckets: string[], windowStart: Date): Promise<Map<string, number>> {
  const { rows } = await db.query<{ bucket: string; count: number }>(
    'SELECT bucket, count FROM sign_in_failures WHERE bucket = ANY($1) AND window_start = $2',
    [buckets, windowStart],
  );
  return new Map(rows.map((r) => [r.bucket, r.count]));
}

// One upsert per bucket in one statement: concurrent failures from several API processes add up.
export async function recordSignInFailure(db: Queryable, buckets: string[], windowStart: Date): Promise<void> {
  await db.query(
    `INSERT INTO sign_in_failures (bucket, window_start, count) SELECT b, $2, 1 FROM unnest($1::text[]) AS b
     ON CONFLICT (bucket, window_start) DO UPDATE SET count = sign_in_failures.count + 1`,
    [[...new Set(buckets)], windowStart],
  );
}

// A successful sign-in clears the address's failures (not the IP's: one good password on a
// shared address must not unlock guessing at others).
export async function clearSignInFailures(db: Queryable, bucket: string): Promise<void> {
  await db.query('DELETE FROM sign_in_failures WHERE bucket = $1', [bucket]);
}

// Maintenance: expired sessions and links, and throttle windows no longer current.
export async function purgeSignInState(db: Queryable, now: Date, windowStart: Date): Promise<number> {
  const a = await db.query('DELETE FROM sessions WHERE expires_at <= $1', [now]);
  const b = await db.query('DELETE FROM sign_in_links WHERE expires_at <= $1', [now]);
  const c = await db.query('DELETE FROM sign_in_failures WHERE window_start < $1', [windowStart]);
  return (a.rowCount ?? 0) + (b.rowCount ?? 0) + (c.rowCount ?? 0);
}
