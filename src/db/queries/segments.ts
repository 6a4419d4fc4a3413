import { keyset, type Page } from '../pagination.js';
import type { Queryable } from '../pool.js';
import { SUBSCRIBER_COLUMNS, type SubscriberRow } from './subscribers.js';

export interface SegmentRow {
  id: string;
  account_id: string;
  name: string;
  match: 'all' | 'any';
  conditions: unknown[];
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, account_id, name, match, conditions, created_at, updated_at';

export async function insertSegment(
  db: Queryable,
  s: { id: string; accountId: string; name: string; match: string; conditions: unknown[]; now: Date },
): Promise<SegmentRow> {
  const { rows } = await db.query<SegmentRow>(
    `INSERT INTO segments (id, account_id, name, match, conditions, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $6) RETURNING ${COLUMNS}`,
    [s.id, s.accountId, s.name, s.match, JSON.stringify(s.conditions), s.now],
  );
  return rows[0];
}

// Scoped by account: another account's segment is indistinguishable from an unknown id.
export async function selectSegment(db: Queryable, accountId: string, id: string): Promise<SegmentRow | null> {
  const { rows } = await db.query<SegmentRow>(`SELECT ${COLUMNS} FROM segments WHERE account_id = $1 AND id = $2`, [accountId, id]);
  return rows[0] ?? null;
}

export async function selectSegmentPage(db: Queryable, accountId: string, page: Page): Promise<SegmentRow[]> {
  const k = keyset(page, 'id', 2);
  const { rows } = await db.query<SegmentRow>(
    `SELECT ${COLUMNS} FROM segments WHERE account_id = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT $${2 + k.params.length}`,
    [accountId, ...k.params, page.limit + 1],
  );
  return rows;
}

// Fixed statement with "was given" flags; the definition was validated by the caller.
export async function updateSegment(
  db: Queryable,
  accountId: string,
  id: string,
  p: { name?: string; match?: string; conditions?: unknown[] },
  now: Date,
): Promise<SegmentRow | null> {
  const { rows } = await db.query<SegmentRow>(
    `UPDATE segments SET
        name = CASE WHEN $3 THEN $4 ELSE name END,
        match = CASE WHEN $5 THEN $6 ELSE match END,
        conditions = CASE WHEN $7 THEN $8::jsonb ELSE conditions END,
        updated_at = $9
      WHERE account_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [accountId, id, p.name !== undefined, p.name ?? null, p.match !== undefined, p.match ?? null,
      p.conditions !== undefined, JSON.stringify(p.conditions ?? []), now],
  );
  return rows[0] ?? null;
}

export async function deleteSegment(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM segments WHERE account_id = $1 AND id = $2', [accountId, id]);
  return rowCount === 1;
}

/**
 * How many of the account's subscribers match a compiled segment filter (compileSegment: fixed
 * SQL text, every value among `params`, whose $1 is the account id).
 */
export async function countMatching(db: Queryable, filter: string, params: unknown[]): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*) AS n FROM subscribers s WHERE s.account_id = $1 AND ${filter}`, params);
  return rows[0].n;
}

/** One keyset page (limit + 1 rows) of the subscribers matching a compiled filter. */
export async function selectMatchingPage(db: Queryable, filter: string, params: unknown[], page: Page): Promise<SubscriberRow[]> {
  const k = keyset(page, 's.id', params.length + 1);
  const { rows } = await db.query<SubscriberRow>(
    `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers s
      WHERE s.account_id = $1 AND ${filter} AND ${k.where}
      ORDER BY ${k.orderBy} LIMIT $${params.length + 1 + k.params.length}`,
    [...params, ...k.params, page.limit + 1],
  );
  return rows;
}
