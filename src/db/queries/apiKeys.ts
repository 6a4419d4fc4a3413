import type { Queryable } from '../pool.js';

export interface ApiKeyRow {
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  name: string | null;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, account_id, mode, name, prefix, created_at, last_used_at, revoked_at';

export async function insertApiKey(
  db: Queryable,
  k: { id: string; accountId: string; mode: 'live' | 'test'; name: string | null; prefix: string; hash: Buffer },
): Promise<ApiKeyRow> {
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, account_id, mode, name, prefix, key_hash) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [k.id, k.accountId, k.mode, k.name, k.prefix, k.hash],
  );
  return rows[0];
}

// Keyset page for the API's key list; the caller fetches limit + 1 rows.
export async function pageApiKeys(
  db: Queryable, accountId: string, k: { where: string; orderBy: string; params: unknown[] }, limit: number,
): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE account_id = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT ${limit + 1}`,
    [accountId, ...k.params],
  );
  return rows;
}

// Scoped by account: another account's key id is simply not found.
export async function getApiKey(db: Queryable, accountId: string, id: string): Promise<ApiKeyRow | null> {
  const { rows } = await db.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE account_id = $1 AND id = $2`, [accountId, id]);
  return rows[0] ?? null;
}

export async function listApiKeys(db: Queryable, accountId: string): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY id`, [accountId]);
  return rows;
}

// Revocation is a timestamp, not a delete, so the key's history stays readable.
// A NULL account ($3) is the operator's CLI, which may revoke any key.
export async function revokeApiKey(db: Queryable, id: string, at: Date, accountId: string | null): Promise<ApiKeyRow | null> {
  const { rows } = await db.query<ApiKeyRow>(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 AND ($3::text IS NULL OR account_id = $3) RETURNING ${COLUMNS}`,
    [id, at, accountId],
  );
  return rows[0] ?? null;
}

export interface AuthenticatedKey {
  key_id: string;
  account_id: string;
  account_name: string;
  monthly_quota: number | null;
  mode: 'live' | 'test';
  prefix: string;
  last_used_at: Date | null;
  window_count: number;
}

/**
 * The per-request hot path in one round trip: find the live (unrevoked) key by its hash and
 * count this request in the account's rate-limit window for that key mode. Limits are per
 * account and mode ("all its test keys together"), so the bucket is account:mode. The
 * window row is shared by every API process, which makes the limit global.
 */
export async function authenticateAndCount(db: Queryable, hash: Buffer, windowStart: Date): Promise<AuthenticatedKey | null> {
  const { rows } = await db.query<AuthenticatedKey>(
    `WITH k AS (
       SELECT k.id AS key_id, k.account_id, a.name AS account_name, a.monthly_quota, k.mode, k.prefix, k.last_used_at
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL
     ), w AS (
       INSERT INTO rate_limit_windows (bucket, window_start, count)
       SELECT account_id || ':' || mode, $2, 1 FROM k
       ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
       RETURNING count
     )
     SELECT k.*, w.count AS window_count FROM k, w`,
    [hash, windowStart],
  );
  return rows[0] ?? null;
}

// Written at most once a minute per key (see domain/apiKeys.ts) to keep auth read-mostly.
export async function touchApiKey(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, at]);
}

// Maintenance: windows older than the current one are never read again.
export async function purgeRateLimitWindows(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM rate_limit_windows WHERE window_start < $1', [before]);
  return rowCount ?? 0;
}
