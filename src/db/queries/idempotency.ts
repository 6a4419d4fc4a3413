import type { Queryable } from '../pool.js';

export interface IdempotencyRow {
  request_hash: Buffer;
  status_code: number | null;
  response_body: string | null;
  content_type: string | null;
}

/**
 * Claims (account, key) for this request. Returns true when this request owns the key;
 * false when a record exists (the caller then reads it to replay or refuse). Expired records
 * are removed first so a key can be reused after 24 h.
 */
export async function claimIdempotencyKey(
  db: Queryable,
  r: { accountId: string; key: string; hash: Buffer; now: Date; expiresAt: Date },
): Promise<boolean> {
  await db.query('DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND expires_at <= $3', [r.accountId, r.key, r.now]);
  const { rowCount } = await db.query(
    `INSERT INTO idempotency_keys (account_id, key, request_hash, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (account_id, key) DO NOTHING`,
    [r.accountId, r.key, r.hash, r.now, r.expiresAt],
  );
  return rowCount === 1;
}

export async function getIdempotencyRecord(db: Queryable, accountId: string, key: string): Promise<IdempotencyRow | null> {
  const { rows } = await db.query<IdempotencyRow>(
    'SELECT request_hash, status_code, response_body, content_type FROM idempotency_keys WHERE account_id = $1 AND key = $2',
    [accountId, key],
  );
  return rows[0] ?? null;
}

export async function completeIdempotencyKey(
  db: Queryable,
  r: { accountId: string; key: string; status: number; body: string; contentType: string | null },
): Promise<void> {
  await db.query(
    'UPDATE idempotency_keys SET status_code = $3, response_body = $4, content_type = $5 WHERE account_id = $1 AND key = $2',
    [r.accountId, r.key, r.status, r.body, r.contentType],
  );
}

// A failed (5xx) first attempt releases the key so the client's retry runs for real.
export async function releaseIdempotencyKey(db: Queryable, accountId: string, key: string): Promise<void> {
  await db.query('DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND status_code IS NULL', [accountId, key]);
}

export async function purgeIdempotencyKeys(db: Queryable, now: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now]);
  return rowCount ?? 0;
}
