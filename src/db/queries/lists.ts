import { keyset, type Page } from '../pagination.js';
import type { Queryable } from '../pool.js';

export interface ListRow {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  double_opt_in: boolean;
  confirmation_template_id: string | null;
  subscriber_count: number;
  created_at: Date;
  updated_at: Date;
}

// The member count is an index-only count over subscriber_lists' primary key (list_id first).
const COLUMNS = `l.id, l.account_id, l.name, l.description, l.double_opt_in, l.confirmation_template_id,
  (SELECT count(*) FROM subscriber_lists m WHERE m.list_id = l.id) AS subscriber_count, l.created_at, l.updated_at`;

export async function insertList(
  db: Queryable,
  l: { id: string; accountId: string; name: string; description: string | null; doubleOptIn: boolean; confirmationTemplateId: string | null; now: Date },
): Promise<ListRow> {
  const { rows } = await db.query<ListRow>(
    `INSERT INTO lists AS l (id, account_id, name, description, double_opt_in, confirmation_template_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING ${COLUMNS}`,
    [l.id, l.accountId, l.name, l.description, l.doubleOptIn, l.confirmationTemplateId, l.now],
  );
  return rows[0];
}

// Scoped by account: another account's list is indistinguishable from an unknown id.
export async function selectList(db: Queryable, accountId: string, id: string): Promise<ListRow | null> {
  const { rows } = await db.query<ListRow>(`SELECT ${COLUMNS} FROM lists l WHERE l.account_id = $1 AND l.id = $2`, [accountId, id]);
  return rows[0] ?? null;
}

/** One keyset page (limit + 1 rows; the caller trims with finishPage). */
export async function selectListPage(db: Queryable, accountId: string, page: Page): Promise<ListRow[]> {
  const k = keyset(page, 'l.id', 2);
  const { rows } = await db.query<ListRow>(
    `SELECT ${COLUMNS} FROM lists l WHERE l.account_id = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT $${2 + k.params.length}`,
    [accountId, ...k.params, page.limit + 1],
  );
  return rows;
}

/**
 * Which of `ids` are lists of this account, with their double opt-in flag: how request bodies
 * naming lists are checked (an id of another account counts as unknown).
 */
export async function selectListFlags(db: Queryable, accountId: string, ids: string[]): Promise<{ id: string; double_opt_in: boolean }[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string; double_opt_in: boolean }>(
    'SELECT id, double_opt_in FROM lists WHERE account_id = $1 AND id = ANY($2::text[])',
    [accountId, ids],
  );
  return rows;
}

export interface ListPatch {
  name?: string;
  description?: string | null;
  doubleOptIn?: boolean;
  confirmationTemplateId?: string | null;
}

/**
 * Partial update as one fixed statement: every column comes with a "was given" flag, so an
 * absent field keeps its value and an explicit null clears it. No SQL is built from the body.
 */
export async function updateList(db: Queryable, accountId: string, id: string, p: ListPatch, now: Date): Promise<ListRow | null> {
  const { rows } = await db.query<ListRow>(
    `UPDATE lists AS l SET
        name = CASE WHEN $3 THEN $4 ELSE l.name END,
        description = CASE WHEN $5 THEN $6 ELSE l.description END,
        double_opt_in = CASE WHEN $7 THEN $8 ELSE l.double_opt_in END,
        confirmation_template_id = CASE WHEN $9 THEN $10 ELSE l.confirmation_template_id END,
        updated_at = $11
      WHERE l.account_id = $1 AND l.id = $2
      RETURNING ${COLUMNS}`,
    [
      accountId, id,
      p.name !== undefined, p.name ?? null,
      p.description !== undefined, p.description ?? null,
      p.doubleOptIn !== undefined, p.doubleOptIn ?? false,
      p.confirmationTemplateId !== undefined, p.confirmationTemplateId ?? null,
      now,
    ],
  );
  return rows[0] ?? null;
}

// Memberships go with the list (ON DELETE CASCADE); subscribers and their other lists stay.
export async function deleteList(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM lists WHERE account_id = $1 AND id = $2', [accountId, id]);
  return rowCount === 1;
}

// Global lookup by id (ids are unique across accounts): the CLI names a list, not an account.
export async function selectListAccount(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ account_id: string }>('SELECT account_id FROM lists WHERE id = $1', [id]);
  return rows[0]?.account_id ?? null;
}
