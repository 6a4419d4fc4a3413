import { keyset, type Page } from '../pagination.js';
import type { Queryable } from '../pool.js';

export interface SuppressionRow {
  id: string;
  account_id: string;
  email: string;
  email_key: string;
  reason: string;
  detail: string | null;
  bounce_reason: string | null;
  created_at: Date;
}

const COLUMNS = 'id, account_id, email, email_key, reason, detail, bounce_reason, created_at';

/**
 * Adds one address unless the account already has it (by email_key). Returns the new row, or
 * null when it existed: the existing entry is kept as it was (its reason and date are the
 * history worth keeping), and concurrent adds of one address cannot both succeed.
 */
export async function insertSuppression(
  db: Queryable,
  s: { id: string; accountId: string; email: string; key: string; reason: string; detail: string | null; bounceReason?: string | null; now: Date },
): Promise<SuppressionRow | null> {
  const { rows } = await db.query<SuppressionRow>(
    `INSERT INTO suppressions (id, account_id, email, email_key, reason, detail, bounce_reason, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (account_id, email_key) DO NOTHING
     RETURNING ${COLUMNS}`,
    [s.id, s.accountId, s.email, s.key, s.reason, s.detail, s.bounceReason ?? null, s.now],
  );
  return rows[0] ?? null;
}

/**
 * The bulk add as one statement (so the batch is atomic) over parallel arrays: one round trip
 * and one plan for up to 10,000 rows instead of 10,000 INSERTs. Duplicates, in the table or
 * within the batch, are skipped by ON CONFLICT DO NOTHING. Callers pass rows sorted by key so
 * that two overlapping batches take the unique-index locks in the same order and cannot
 * deadlock. Returns how many rows were inserted.
 */
export async function insertSuppressions(
  db: Queryable,
  accountId: string,
  rows: { id: string; email: string; key: string; reason: string }[],
  now: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  const { rowCount } = await db.query(
    `INSERT INTO suppressions (id, account_id, email, email_key, reason, created_at)
     SELECT r.id, $1, r.email, r.email_key, r.reason, $6
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS r(id, email, email_key, reason, n)
      ORDER BY r.n
     ON CONFLICT (account_id, email_key) DO NOTHING`,
    [accountId, rows.map((r) => r.id), rows.map((r) => r.email), rows.map((r) => r.key), rows.map((r) => r.reason), now],
  );
  return rowCount ?? 0;
}

// The send-time check: one probe of the (account_id, email_key) unique index.
export async function selectSuppression(db: Queryable, accountId: string, key: string): Promise<SuppressionRow | null> {
  const { rows } = await db.query<SuppressionRow>(`SELECT ${COLUMNS} FROM suppressions WHERE account_id = $1 AND email_key = $2`, [accountId, key]);
  return rows[0] ?? null;
}

// The check for many recipients at once (campaign fan-out, batch send): one query per batch.
export async function selectSuppressions(db: Queryable, accountId: string, keys: string[]): Promise<SuppressionRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<SuppressionRow>(
    `SELECT ${COLUMNS} FROM suppressions WHERE account_id = $1 AND email_key = ANY($2::text[])`,
    [accountId, keys],
  );
  return rows;
}

// The send API's check for many concurrent requests of any accounts (domain/suppression.ts
// batches them): which (account, key) pairs are on a list, in one query. Each pair is one
// probe of the UNIQUE (account_id, email_key) index.
export async function selectSuppressedPairs(db: Queryable, accountIds: string[], keys: string[]): Promise<{ account_id: string; email_key: string }[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ account_id: string; email_key: string }>(
    `SELECT s.account_id, s.email_key FROM unnest($1::text[], $2::text[]) AS p(account_id, email_key)
       JOIN suppressions s ON s.account_id = p.account_id AND s.email_key = p.email_key`,
    [accountIds, keys],
  );
  return rows;
}

// Re-subscribe: removes the entry and returns what was removed (null when there was none).
export async function deleteSuppression(db: Queryable, accountId: string, key: string): Promise<SuppressionRow | null> {
  const { rows } = await db.query<SuppressionRow>(
    `DELETE FROM suppressions WHERE account_id = $1 AND email_key = $2 RETURNING ${COLUMNS}`,
    [accountId, key],
  );
  return rows[0] ?? null;
}

/**
 * One page of the list, keyset-paginated on the time-ordered id (limit + 1 rows; the caller
 * trims). Fixed statement text for every filter combination (NULL = filter off). The search
 * is case-insensitive on the address as given and on its matching key (so an IDN domain is
 * found in either spelling), with position() so `%` and `_` are plain characters.
 */
export async function selectSuppressionPage(
  db: Queryable,
  accountId: string,
  filter: { reason: string | null; q: string | null },
  page: Page,
): Promise<SuppressionRow[]> {
  const k = keyset(page, 'id', 4);
  const { rows } = await db.query<SuppressionRow>(
    `SELECT ${COLUMNS} FROM suppressions
      WHERE account_id = $1
        AND ($2::text IS NULL OR reason = $2::text)
        AND ($3::text IS NULL OR position(lower($3::text) in lower(email)) > 0 OR position(lower($3::text) in email_key) > 0)
        AND ${k.where}
      ORDER BY ${k.orderBy}
      LIMIT $${4 + k.params.length}`,
    [accountId, filter.reason, filter.q, ...k.params, page.limit + 1],
  );
  return rows;
}
