import { keyset, type Page } from '../pagination.js';
import type { Queryable } from '../pool.js';

export type SubscriberStatus = 'active' | 'unconfirmed' | 'unsubscribed' | 'bounced' | 'complained';

export interface SubscriberRow {
  id: string;
  account_id: string;
  email: string;
  email_key: string;
  name: string | null;
  status: SubscriberStatus;
  attributes: Record<string, unknown>;
  lists: string[];
  created_at: Date;
  updated_at: Date;
}

/** Columns of a subscriber as the API shows it, for a query over `subscribers s`. */
export const SUBSCRIBER_COLUMNS = `s.id, s.account_id, s.email, s.email_key, s.name, s.status, s.attributes,
  array(SELECT m.list_id FROM subscriber_lists m WHERE m.subscriber_id = s.id ORDER BY m.list_id) AS lists,
  s.created_at, s.updated_at`;

/**
 * The status a suppression imposes (docs/audience.md): the reasons that come from the
 * recipient or their mailbox. 'manual' and 'import' suppressions leave the status as it is
 * (sending still honours them).
 */
export const SUPPRESSED_STATUS_SQL = `CASE sp.reason WHEN 'unsubscribe' THEN 'unsubscribed' WHEN 'complaint' THEN 'complained'
  WHEN 'hard_bounce' THEN 'bounced' END`;

export async function selectSubscriberById(db: Queryable, accountId: string, id: string): Promise<SubscriberRow | null> {
  const { rows } = await db.query<SubscriberRow>(`SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers s WHERE s.account_id = $1 AND s.id = $2`, [accountId, id]);
  return rows[0] ?? null;
}

// The unique (account_id, email_key) index answers this.
export async function selectSubscriberByKey(db: Queryable, accountId: string, emailKey: string): Promise<SubscriberRow | null> {
  const { rows } = await db.query<SubscriberRow>(
    `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers s WHERE s.account_id = $1 AND s.email_key = $2`,
    [accountId, emailKey],
  );
  return rows[0] ?? null;
}

// Subscribers of several (account, address) pairs at once (batched triggers); keyed `account email_key`.
export async function selectSubscribersByKeys(db: Queryable, keys: { accountId: string; emailKey: string }[]): Promise<Map<string, SubscriberRow>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.query<SubscriberRow>(
    `SELECT ${SUBSCRIBER_COLUMNS} FROM unnest($1::text[], $2::text[]) AS k(account_id, email_key)
       JOIN subscribers s ON s.account_id = k.account_id AND s.email_key = k.email_key`,
    [keys.map((k) => k.accountId), keys.map((k) => k.emailKey)],
  );
  return new Map(rows.map((r) => [`${r.account_id} ${r.email_key}`, r]));
}

export interface SubscriberFilter {
  listId: string | null;
  status: SubscriberStatus | null;
  /** Case-insensitive substring of email or name. */
  q: string | null;
}

/**
 * One keyset page (limit + 1 rows). Without a list filter it walks subscribers_account by id;
 * with one it walks the list's primary-key range, whose second column is the subscriber id,
 * so both are index order and a cursor is just the last id. The search uses strpos() rather
 * than LIKE so `%` and `_` typed by a user are plain characters.
 */
export async function selectSubscriberPage(db: Queryable, accountId: string, f: SubscriberFilter, page: Page): Promise<SubscriberRow[]> {
  const filters = `s.account_id = $1
        AND ($2::text IS NULL OR s.status = $2::text)
        AND ($3::text IS NULL OR strpos(lower(s.email), lower($3::text)) > 0 OR strpos(lower(coalesce(s.name, '')), lower($3::text)) > 0)`;
  if (f.listId === null) {
    const k = keyset(page, 's.id', 4);
    const { rows } = await db.query<SubscriberRow>(
      `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers s
        WHERE ${filters} AND ${k.where}
        ORDER BY ${k.orderBy} LIMIT $${4 + k.params.length}`,
      [accountId, f.status, f.q, ...k.params, page.limit + 1],
    );
    return rows;
  }
  const k = keyset(page, 'l.subscriber_id', 5);
  const { rows } = await db.query<SubscriberRow>(
    `SELECT ${SUBSCRIBER_COLUMNS} FROM subscriber_lists l JOIN subscribers s ON s.id = l.subscriber_id
      WHERE l.list_id = $4 AND ${filters} AND ${k.where}
      ORDER BY ${k.orderBy} LIMIT $${5 + k.params.length}`,
    [accountId, f.status, f.q, f.listId, ...k.params, page.limit + 1],
  );
  return rows;
}

/** One row to insert or merge; `nameSet` false keeps a stored name. */
export interface UpsertInput {
  id: string;
  email: string;
  emailKey: string;
  name: string | null;
  nameSet: boolean;
  status: SubscriberStatus | null;
  attributes: Record<string, unknown> | null;
}

const INPUT_CTE = `input AS (
  SELECT * FROM jsonb_to_recordset($2::jsonb)
    AS x(id text, email text, email_key text, name text, name_set boolean, status text, attributes jsonb)
)`;

function inputJson(rows: UpsertInput[]): string {
  return JSON.stringify(rows.map((r) => ({
    id: r.id, email: r.email, email_key: r.emailKey, name: r.name, name_set: r.nameSet, status: r.status, attributes: r.attributes,
  })));
}

/**
 * Insert-or-merge of many subscribers with distinct email keys, in two set-based statements
 * (call inside a transaction):
 *  1. INSERT the new ones; an existing row only gets its updated_at touched, which locks it,
 *     so no concurrent writer can slip in before step 2. `xmax = 0` tells inserted rows apart.
 *  2. UPDATE the existing ones: name if given, attributes merged (a null value removes a key),
 *     status if given.
 * In both, a suppression of the address (unsubscribe, complaint, hard bounce) decides the
 * status, whatever was asked. Rows are fed in email_key order so two imports touching the same
 * addresses lock them in the same order and cannot deadlock.
 */
export async function upsertSubscribers(
  db: Queryable,
  accountId: string,
  rows: UpsertInput[],
  opts: { newStatus: SubscriberStatus; now: Date },
): Promise<{ id: string; email_key: string; inserted: boolean }[]> {
  if (rows.length === 0) return [];
  const json = inputJson([...rows].sort((a, b) => (a.emailKey < b.emailKey ? -1 : a.emailKey > b.emailKey ? 1 : 0)));
  const inserted = await db.query<{ id: string; email_key: string; inserted: boolean }>(
    `WITH ${INPUT_CTE}
     INSERT INTO subscribers AS s (id, account_id, email, email_key, name, status, attributes, created_at, updated_at)
     SELECT x.id, $1, x.email, x.email_key, x.name, coalesce(${SUPPRESSED_STATUS_SQL}, x.status, $3),
            jsonb_strip_nulls(coalesce(x.attributes, '{}')), $4, $4
       FROM input x LEFT JOIN suppressions sp ON sp.account_id = $1 AND sp.email_key = x.email_key
      ORDER BY x.email_key
     ON CONFLICT (account_id, email_key) DO UPDATE SET updated_at = EXCLUDED.updated_at
     RETURNING s.id, s.email_key, (s.xmax = 0) AS inserted`,
    [accountId, json, opts.newStatus, opts.now],
  );
  const existing = inserted.rows.filter((r) => !r.inserted).map((r) => r.email_key);
  if (existing.length > 0) {
    await db.query(
      `WITH ${INPUT_CTE}
       UPDATE subscribers s SET
          name = CASE WHEN x.name_set THEN x.name ELSE s.name END,
          attributes = jsonb_strip_nulls(s.attributes || coalesce(x.attributes, '{}')),
          status = coalesce(${SUPPRESSED_STATUS_SQL}, x.status, s.status),
          updated_at = $3
         FROM input x LEFT JOIN suppressions sp ON sp.account_id = $1 AND sp.email_key = x.email_key
        WHERE s.account_id = $1 AND s.email_key = x.email_key AND x.email_key = ANY($4::text[])`,
      [accountId, json, opts.now, existing],
    );
  }
  return inserted.rows;
}

// Adding an existing membership is a no-op; the caller has checked the lists' account.
export async function insertMemberships(db: Queryable, accountId: string, subscriberIds: string[], listIds: string[], now: Date): Promise<void> {
  if (subscriberIds.length === 0 || listIds.length === 0) return;
  await db.query(
    `INSERT INTO subscriber_lists (list_id, subscriber_id, account_id, created_at)
     SELECT l, s, $1, $4 FROM unnest($2::text[]) AS s CROSS JOIN unnest($3::text[]) AS l
     ORDER BY l, s
     ON CONFLICT DO NOTHING`,
    [accountId, subscriberIds, listIds, now],
  );
}

export async function deleteMemberships(db: Queryable, accountId: string, subscriberId: string, listIds: string[]): Promise<void> {
  if (listIds.length === 0) return;
  await db.query(
    'DELETE FROM subscriber_lists WHERE account_id = $1 AND subscriber_id = $2 AND list_id = ANY($3::text[])',
    [accountId, subscriberId, listIds],
  );
}

export interface SubscriberPatch {
  email?: { email: string; emailKey: string };
  name?: string | null;
  status?: SubscriberStatus;
  attributes?: Record<string, unknown>;
}

/**
 * Partial update as one fixed statement ("was given" flags, no SQL from the body). The
 * status is recomputed against the suppression of the (possibly new) address, so changing the
 * email to a suppressed one shows that status. A unique violation on email_key means another
 * subscriber has the new address.
 */
export async function updateSubscriber(db: Queryable, accountId: string, id: string, p: SubscriberPatch, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE subscribers s SET
        email = CASE WHEN $3 THEN $4 ELSE s.email END,
        email_key = CASE WHEN $3 THEN $5 ELSE s.email_key END,
        name = CASE WHEN $6 THEN $7 ELSE s.name END,
        attributes = CASE WHEN $8 THEN jsonb_strip_nulls(s.attributes || $9::jsonb) ELSE s.attributes END,
        status = coalesce(
          (SELECT ${SUPPRESSED_STATUS_SQL} FROM suppressions sp
            WHERE sp.account_id = $1 AND sp.email_key = CASE WHEN $3 THEN $5 ELSE s.email_key END),
          $10, s.status),
        updated_at = $11
      WHERE s.account_id = $1 AND s.id = $2`,
    [
      accountId, id,
      p.email !== undefined, p.email?.email ?? null, p.email?.emailKey ?? null,
      p.name !== undefined, p.name ?? null,
      p.attributes !== undefined, JSON.stringify(p.attributes ?? {}),
      p.status ?? null,
      now,
    ],
  );
  return rowCount === 1;
}

// Memberships and pending confirmations go with the subscriber (ON DELETE CASCADE).
export async function deleteSubscriber(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM subscribers WHERE account_id = $1 AND id = $2', [accountId, id]);
  return rowCount === 1;
}

/** The suppression reason of an address of this account, or null when it is not suppressed. */
export async function selectSuppressionReason(db: Queryable, accountId: string, emailKey: string): Promise<string | null> {
  const { rows } = await db.query<{ reason: string }>('SELECT reason FROM suppressions WHERE account_id = $1 AND email_key = $2', [accountId, emailKey]);
  return rows[0]?.reason ?? null;
}

/**
 * Sets the status of the subscriber with this address, optionally only from some statuses
 * (re-subscribe turns suppression statuses back to active and leaves an unconfirmed one be).
 */
export async function updateStatusByKey(
  db: Queryable,
  accountId: string,
  emailKey: string,
  status: SubscriberStatus,
  fromStatuses: SubscriberStatus[] | null,
  now: Date,
): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE subscribers SET status = $3, updated_at = $5
      WHERE account_id = $1 AND email_key = $2 AND status <> $3 AND ($4::text[] IS NULL OR status = ANY($4::text[]))`,
    [accountId, emailKey, status, fromStatuses, now],
  );
  return rowCount ?? 0;
}
