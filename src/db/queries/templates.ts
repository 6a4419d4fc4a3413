import { type Page, keyset } from '../pagination.js';
import type { Queryable } from '../pool.js';

export interface TemplateRow {
  id: string;
  account_id: string;
  name: string;
  folder: string | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A list row: the bodies stay in the database (they may be megabytes each). */
export type TemplateSummaryRow = Omit<TemplateRow, 'html' | 'text'>;

const COLUMNS = 'id, account_id, name, folder, subject, html, text, created_at, updated_at';
const SUMMARY_COLUMNS = 'id, account_id, name, folder, subject, created_at, updated_at';

export async function insertTemplate(
  db: Queryable,
  t: { id: string; accountId: string; name: string; folder: string | null; subject: string | null; html: string | null; text: string | null; now: Date },
): Promise<TemplateRow> {
  const { rows } = await db.query<TemplateRow>(
    `INSERT INTO templates (id, account_id, name, folder, subject, html, text, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING ${COLUMNS}`,
    [t.id, t.accountId, t.name, t.folder, t.subject, t.html, t.text, t.now],
  );
  return rows[0];
}

// Scoped by account: another account's id finds nothing, exactly like an unknown id.
export async function selectTemplate(db: Queryable, accountId: string, id: string): Promise<TemplateRow | null> {
  const { rows } = await db.query<TemplateRow>(`SELECT ${COLUMNS} FROM templates WHERE account_id = $1 AND id = $2`, [accountId, id]);
  return rows[0] ?? null;
}

/**
 * One page of an account's templates, keyset-paginated on the time-ordered id (limit + 1 rows;
 * the caller trims). The filters are written so the statement text is the same for every
 * combination: `folderSet` false ignores the folder, true matches it (NULL = no folder, hence
 * IS NOT DISTINCT FROM); the name search uses position() rather than LIKE so that `%` and `_`
 * typed by a user are plain characters.
 */
export async function selectTemplatePage(
  db: Queryable,
  accountId: string,
  filter: { folderSet: boolean; folder: string | null; q: string | null },
  page: Page,
): Promise<TemplateSummaryRow[]> {
  const k = keyset(page, 'id', 5);
  const { rows } = await db.query<TemplateSummaryRow>(
    `SELECT ${SUMMARY_COLUMNS} FROM templates
      WHERE account_id = $1
        AND ($2::boolean IS FALSE OR folder IS NOT DISTINCT FROM $3::text)
        AND ($4::text IS NULL OR position(lower($4::text) in lower(name)) > 0)
        AND ${k.where}
      ORDER BY ${k.orderBy}
      LIMIT $${5 + k.params.length}`,
    [accountId, filter.folderSet, filter.folder, filter.q, ...k.params, page.limit + 1],
  );
  return rows;
}

export interface TemplatePatch {
  name?: string;
  folder?: string | null;
  subject?: string | null;
  html?: string | null;
  text?: string | null;
}

/**
 * Partial update as one fixed statement: each column comes with a "was given" flag, so an
 * absent field keeps its value while an explicit null clears it. No SQL is assembled from
 * the request.
 */
export async function updateTemplate(
  db: Queryable,
  accountId: string,
  id: string,
  patch: TemplatePatch,
  now: Date,
): Promise<TemplateRow | null> {
  const given = (k: keyof TemplatePatch) => patch[k] !== undefined;
  const { rows } = await db.query<TemplateRow>(
    `UPDATE templates SET
        name    = CASE WHEN $3  THEN $4  ELSE name    END,
        folder  = CASE WHEN $5  THEN $6  ELSE folder  END,
        subject = CASE WHEN $7  THEN $8  ELSE subject END,
        html    = CASE WHEN $9  THEN $10 ELSE html    END,
        text    = CASE WHEN $11 THEN $12 ELSE text    END,
        updated_at = $13
      WHERE account_id = $1 AND id = $2
      RETURNING ${COLUMNS}`,
    [
      accountId, id,
      given('name'), patch.name ?? null,
      given('folder'), patch.folder ?? null,
      given('subject'), patch.subject ?? null,
      given('html'), patch.html ?? null,
      given('text'), patch.text ?? null,
      now,
    ],
  );
  return rows[0] ?? null;
}

export async function deleteTemplate(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM templates WHERE account_id = $1 AND id = $2', [accountId, id]);
  return rowCount === 1;
}

// Folder names with their template counts, named folders by name and the unfiled ones
// (folder NULL) last; served by the (account_id, folder, id) index.
export async function selectFolderCounts(db: Queryable, accountId: string): Promise<{ folder: string | null; count: number }[]> {
  const { rows } = await db.query<{ folder: string | null; count: number }>(
    `SELECT folder, count(*) AS count FROM templates WHERE account_id = $1
      GROUP BY folder ORDER BY folder ASC NULLS LAST`,
    [accountId],
  );
  return rows;
}
