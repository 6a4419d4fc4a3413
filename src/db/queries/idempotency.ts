import type { Queryable } from '../pool.js';

export interface IdempotencyRow {
  request_hash: Buffer;
  status_code: number | null;
  response_body: string | null;
  content_type: string | null;
  locked_until: Date | null;
}

/** A claim's lease: who holds it (a token per claim) and until when. */
export interface IdempotencyLease {
  accountId: string;
  key: string;
  token: string;
  lockedUntil: Date;
}

export type ClaimOutcome =
  /** This request owns the key: a fresh claim, or one taken over from an expired lease. */
  | { owned: true; ref: string; takenOver: boolean }
  /** Someone else's record: replay it, or refuse while its lease holds. */
  | { owned: false; record: IdempotencyRow | null };

/**
 * Claims (account, key) for this request with a lease (docs/decisions/0029-idempotency-lease.md).
 * In order: a record past its 24 h is removed, so the key can be reused; a new record is
 * inserted (ON CONFLICT DO NOTHING: of two concurrent requests exactly one inserts); failing
 * that, an unfinished record with the same request hash whose lease ran out is taken over,
 * keeping its request_ref so the new owner can find what the old one committed. The UPDATE's
 * WHERE re-checks the lease under the row lock, so of two requests racing for an expired
 * lease one wins. Otherwise the record is returned for the caller to replay or refuse.
 */
export async function claimIdempotencyKey(
  db: Queryable,
  r: { lease: IdempotencyLease; ref: string; hash: Buffer; now: Date; expiresAt: Date },
): Promise<ClaimOutcome> {
  const { accountId, key, token, lockedUntil } = r.lease;
  await db.query('DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND expires_at <= $3', [accountId, key, r.now]);
  const inserted = await db.query(
    `INSERT INTO idempotency_keys (account_id, key, request_hash, created_at, expires_at, request_ref, lease_token, locked_until)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (account_id, key) DO NOTHING`,
    [accountId, key, r.hash, r.now, r.expiresAt, r.ref, token, lockedUntil],
  );
  if (inserted.rowCount === 1) return { owned: true, ref: r.ref, takenOver: false };
  // A record written before leases existed has no request_ref: it gets one now.
  const taken = await db.query<{ request_ref: string }>(
    `UPDATE idempotency_keys SET lease_token = $4, locked_until = $5, request_ref = coalesce(request_ref, $6)
      WHERE account_id = $1 AND key = $2 AND request_hash = $3 AND status_code IS NULL
        AND (locked_until IS NULL OR locked_until <= $7)
      RETURNING request_ref`,
    [accountId, key, r.hash, token, lockedUntil, r.ref, r.now],
  );
  if (taken.rowCount === 1) return { owned: true, ref: taken.rows[0].request_ref, takenOver: true };
  return { owned: false, record: await getIdempotencyRecord(db, accountId, key) };
}

export async function getIdempotencyRecord(db: Queryable, accountId: string, key: string): Promise<IdempotencyRow | null> {
  const { rows } = await db.query<IdempotencyRow>(
    'SELECT request_hash, status_code, response_body, content_type, locked_until FROM idempotency_keys WHERE account_id = $1 AND key = $2',
    [accountId, key],
  );
  return rows[0] ?? null;
}

/** Extends a lease this request still holds; false when it was lost (taken over or finished). */
export async function renewIdempotencyLease(db: Queryable, lease: IdempotencyLease): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE idempotency_keys SET locked_until = $4
      WHERE account_id = $1 AND key = $2 AND lease_token = $3 AND status_code IS NULL`,
    [lease.accountId, lease.key, lease.token, lease.lockedUntil],
  );
  return rowCount === 1;
}

/** Stores the first response, if this request still holds the claim (a taker answers for itself). */
export async function completeIdempotencyKey(
  db: Queryable,
  lease: Pick<IdempotencyLease, 'accountId' | 'key' | 'token'>,
  r: { status: number; body: string; contentType: string | null },
): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys SET status_code = $4, response_body = $5, content_type = $6, locked_until = NULL
      WHERE account_id = $1 AND key = $2 AND lease_token = $3 AND status_code IS NULL`,
    [lease.accountId, lease.key, lease.token, r.status, r.body, r.contentType],
  );
}

// A failed (5xx) first attempt releases the key so the client's retry runs for real.
export async function releaseIdempotencyKey(db: Queryable, lease: Pick<IdempotencyLease, 'accountId' | 'key' | 'token'>): Promise<void> {
  await db.query(
    'DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND lease_token = $3 AND status_code IS NULL',
    [lease.accountId, lease.key, lease.token],
  );
}

export async function purgeIdempotencyKeys(db: Queryable, now: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now]);
  return rowCount ?? 0;
}
