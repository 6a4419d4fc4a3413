import type { Queryable } from '../pool.js';

/** Last check of one published record, kept in `domains.record_status` under the record's purpose. */
export interface StoredRecordCheck {
  status: string;
  checkedAt: string;
  detail: string | null;
}

export interface DomainRow {
  id: string;
  account_id: string;
  name: string;
  status: 'pending' | 'verified';
  rsa_selector: string;
  rsa_public_txt: string;
  ed_selector: string;
  ed_public_txt: string;
  record_status: Record<string, StoredRecordCheck>;
  verified_at: Date | null;
  checked_at: Date | null;
  tracking_status: 'pending' | 'verified' | 'failed';
  tracking_checked_at: Date | null;
  created_at: Date;
}

/** The encrypted private keys are read only by selectSigningKeys: no other statement returns them. */
const COLUMNS = `id, account_id, name, status, rsa_selector, rsa_public_txt, ed_selector, ed_public_txt,
  record_status, verified_at, checked_at, tracking_status, tracking_checked_at, created_at`;

export interface NewDomain {
  id: string;
  accountId: string;
  name: string;
  rsaSelector: string;
  rsaPrivateKey: string;
  rsaPublicTxt: string;
  edSelector: string;
  edPrivateKey: string;
  edPublicTxt: string;
  now: Date;
}

/**
 * ON CONFLICT DO NOTHING on (account_id, name) rather than catching the unique violation:
 * an empty result means "this account already has the domain", decided by the index even
 * when two requests race.
 */
export async function insertDomain(db: Queryable, d: NewDomain): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>(
    `INSERT INTO domains (id, account_id, name, rsa_selector, rsa_private_key, rsa_public_txt,
                          ed_selector, ed_private_key, ed_public_txt, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (account_id, name) DO NOTHING
     RETURNING ${COLUMNS}`,
    [d.id, d.accountId, d.name, d.rsaSelector, d.rsaPrivateKey, d.rsaPublicTxt, d.edSelector, d.edPrivateKey, d.edPublicTxt, d.now],
  );
  return rows[0] ?? null;
}

// Scoped by account: another account's id finds nothing, exactly like an unknown id.
export async function selectDomain(db: Queryable, accountId: string, id: string): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>(`SELECT ${COLUMNS} FROM domains WHERE account_id = $1 AND id = $2`, [accountId, id]);
  return rows[0] ?? null;
}

// Unscoped, for operator tools (CLI) and the sending pipeline, which start from a domain id.
export async function selectDomainById(db: Queryable, id: string): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>(`SELECT ${COLUMNS} FROM domains WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/**
 * The send path's check, once per POST /emails: an equality lookup on the
 * UNIQUE (account_id, name) index, filtered to verified domains.
 */
export async function selectVerifiedDomainByName(db: Queryable, accountId: string, name: string): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>(
    `SELECT ${COLUMNS} FROM domains WHERE account_id = $1 AND name = $2 AND status = 'verified'`,
    [accountId, name],
  );
  return rows[0] ?? null;
}

// The sender for mail Postline itself sends for an account (double opt-in confirmations):
// the oldest verified domain, so the choice is stable.
export async function selectFirstVerifiedDomain(db: Queryable, accountId: string): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>(
    `SELECT ${COLUMNS} FROM domains WHERE account_id = $1 AND status = 'verified' ORDER BY id LIMIT 1`,
    [accountId],
  );
  return rows[0] ?? null;
}

/**
 * One page of an account's domains, keyset-paginated on the time-ordered id; fetches
 * `limit + 1` rows so the caller knows whether another page follows. The direction is one of
 * two fixed statements, never text taken from the request.
 */
export async function selectDomainPage(
  db: Queryable,
  accountId: string,
  page: { limit: number; order: 'asc' | 'desc'; afterId: string | null },
): Promise<DomainRow[]> {
  const sql = page.order === 'desc'
    ? `SELECT ${COLUMNS} FROM domains WHERE account_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`
    : `SELECT ${COLUMNS} FROM domains WHERE account_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id ASC LIMIT $3`;
  const { rows } = await db.query<DomainRow>(sql, [accountId, page.afterId, page.limit + 1]);
  return rows;
}

// Every domain of an account, oldest first (CLI listing).
export async function selectDomainsOfAccount(db: Queryable, accountId: string): Promise<DomainRow[]> {
  const { rows } = await db.query<DomainRow>(`SELECT ${COLUMNS} FROM domains WHERE account_id = $1 ORDER BY id`, [accountId]);
  return rows;
}

export async function deleteDomain(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM domains WHERE account_id = $1 AND id = $2', [accountId, id]);
  return rowCount === 1;
}

export interface DomainCheckUpdate {
  recordStatus: Record<string, StoredRecordCheck>;
  dkimVerified: boolean;
  /** null leaves the tracking status as it was (a temporary DNS failure proves nothing). */
  trackingStatus: 'verified' | 'failed' | null;
  now: Date;
}

/**
 * Records the result of a full DNS check in one statement. Verification is one-way: a
 * matching DKIM record verifies the domain, a later failing check only updates the record
 * statuses (mail already queued must not start failing because a DNS host had a bad minute).
 * The right-hand sides read the row as it was before the update, so verified_at keeps the
 * first verification time.
 */
export async function updateDomainCheck(db: Queryable, accountId: string, id: string, u: DomainCheckUpdate): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>(
    `UPDATE domains SET
        record_status = record_status || $3::jsonb,
        checked_at = $4,
        status = CASE WHEN $5 THEN 'verified' ELSE status END,
        verified_at = CASE WHEN $5 AND verified_at IS NULL THEN $4 ELSE verified_at END,
        tracking_status = coalesce($6, tracking_status),
        tracking_checked_at = $4
      WHERE account_id = $1 AND id = $2
      RETURNING ${COLUMNS}`,
    [accountId, id, JSON.stringify(u.recordStatus), u.now, u.dkimVerified, u.trackingStatus],
  );
  return rows[0] ?? null;
}

/** The tracking CNAME check alone: its status, its time, and its entry in record_status. */
export async function updateTrackingCheck(
  db: Queryable,
  accountId: string,
  id: string,
  u: { check: StoredRecordCheck; trackingStatus: 'verified' | 'failed' | null; now: Date },
): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>(
    `UPDATE domains SET
        record_status = record_status || jsonb_build_object('tracking', $3::jsonb),
        tracking_status = coalesce($4, tracking_status),
        tracking_checked_at = $5
      WHERE account_id = $1 AND id = $2
      RETURNING ${COLUMNS}`,
    [accountId, id, JSON.stringify(u.check), u.trackingStatus, u.now],
  );
  return rows[0] ?? null;
}

// Operator override (CLI --force, tests): verified without looking at DNS.
export async function markDomainVerified(db: Queryable, id: string, now: Date): Promise<DomainRow | null> {
  const { rows } = await db.query<DomainRow>(
    `UPDATE domains SET status = 'verified', verified_at = coalesce(verified_at, $2)
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, now],
  );
  return rows[0] ?? null;
}

export interface SigningKeysRow {
  name: string;
  rsa_selector: string;
  rsa_private_key: string;
  ed_selector: string;
  ed_private_key: string;
  tracking_status: 'pending' | 'verified' | 'failed';
}

// The only statement that reads the encrypted private keys; its caller decrypts them for the signer.
export async function selectSigningKeys(db: Queryable, id: string): Promise<SigningKeysRow | null> {
  const { rows } = await db.query<SigningKeysRow>(
    'SELECT name, rsa_selector, rsa_private_key, ed_selector, ed_private_key, tracking_status FROM domains WHERE id = $1',
    [id],
  );
  return rows[0] ?? null;
}

// The verified domain of this name signing mail the deployment itself sends (TLS reports,
// docs/decisions/0036-tls-report-mail.md): any account's, since the operator adds it like any
// sender domain; verified means its DKIM records were found, and the latest verified wins.
export async function selectVerifiedDomainIdByName(db: Queryable, name: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM domains WHERE name = $1 AND status = 'verified' ORDER BY verified_at DESC NULLS LAST, id LIMIT 1`,
    [name],
  );
  return rows[0]?.id ?? null;
}
