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

export interface LiveKeyRow {
  key_id: string;
  account_id: string;
  account_name: string;
  monthly_quota: number | null;
  mode: 'live' | 'test';
  prefix: string;
  last_used_at: Date | null;
}

// The key lookup of the auth hot path (cached per process for a few seconds, see
// domain/keys/key-cache.ts): the unrevoked key with this hash and what a request needs of its account.
export async function findLiveKey(db: Queryable, hash: Buffer): Promise<LiveKeyRow | null> {
  const { rows } = await db.query<LiveKeyRow>(
    `SELECT k.id AS key_id, k.account_id, a.name AS account_name, a.monthly_quota, k.mode, k.prefix, k.last_used_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [hash],
  );
  return rows[0] ?? null;
}

/** Requests to count, per (bucket, window): what a group of counted requests adds. */
export interface RateWindowCount {
  bucket: string;
  windowStart: Date;
  n: number;
}

/** A window's total after a statement's addition. */
export interface RateWindowTotal {
  bucket: string;
  window_start: Date;
  count: number;
}

/**
 * The upsert that counts requests in their windows, with its three array parameters numbered
 * from `first` (`$first` buckets, then window starts, then counts; see rateWindowParams): each
 * (bucket, window) gets `n` added and the total after the addition is returned. The window row
 * is shared by every API process, so the limit stays global and exact: every request adds
 * exactly one, and the totals a statement returns are its own. Rows are inserted in
 * (bucket, window) order so two processes' statements lock shared rows in the same order and
 * cannot deadlock. Also the first part of the accept statement that carries counts
 * (queries/counted-accepts.ts).
 */
export function rateWindowsUpsert(first: number): string {
  return `INSERT INTO rate_limit_windows (bucket, window_start, count)
     SELECT bucket, window_start, n FROM unnest($${first}::text[], $${first + 1}::timestamptz[], $${first + 2}::int[]) WITH ORDINALITY AS c(bucket, window_start, n, i) ORDER BY i
     ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + excluded.count
     RETURNING bucket, window_start, count`;
}

/** rateWindowsUpsert's three parameters, in the (bucket, window) order that keeps lock order. */
export function rateWindowParams(counts: readonly RateWindowCount[]): [string[], Date[], number[]] {
  const sorted = [...counts].sort((a, b) => (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : a.windowStart.getTime() - b.windowStart.getTime()));
  return [sorted.map((c) => c.bucket), sorted.map((c) => c.windowStart), sorted.map((c) => c.n)];
}

const ADD_TO_RATE_WINDOWS = rateWindowsUpsert(1);

/**
 * Counts many requests in their rate-limit windows in one statement (domain/request-writes.ts
 * group-commits them): rateWindowsUpsert alone, for a group of requests with no accepted send
 * to ride with.
 */
export async function addToRateWindows(db: Queryable, counts: readonly RateWindowCount[]): Promise<RateWindowTotal[]> {
  const { rows } = await db.query<RateWindowTotal>({
    // Named: each connection parses and plans it once, not once per group of counted requests.
    name: 'add_to_rate_windows',
    text: ADD_TO_RATE_WINDOWS,
    values: rateWindowParams(counts),
  });
  return rows;
}

// Written at most once a minute per key (see domain/keys/api-keys.ts) to keep auth read-mostly.
export async function touchApiKey(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, at]);
}

// Maintenance: windows older than the current one are never read again.
export async function purgeRateLimitWindows(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM rate_limit_windows WHERE window_start < $1', [before]);
  return rowCount ?? 0;
}
