import { keyset, type Page } from '../pagination.js';
import type { Queryable } from '../pool.js';

export interface ImportRowError {
  row: number;
  email?: string;
  message: string;
}

export interface ImportRow {
  id: string;
  account_id: string;
  list_id: string | null;
  status: 'queued' | 'running' | 'completed' | 'failed';
  total: number;
  checkpoint: number;
  created: number;
  updated: number;
  skipped: number;
  error_count: number;
  errors: ImportRowError[];
  attempts: number;
  failure: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** At most this many row errors are kept (error_count still counts them all). */
export const MAX_STORED_ERRORS = 1000;

// The payload stays out of these columns: it may be megabytes and is read once per run.
const COLUMNS = `id, account_id, list_id, status, total, checkpoint, created, updated, skipped, error_count, errors,
  attempts, failure, created_at, started_at, finished_at`;

export async function insertImport(
  db: Queryable,
  i: { id: string; accountId: string; listId: string; total: number; payload: string; now: Date },
): Promise<ImportRow> {
  const { rows } = await db.query<ImportRow>(
    `INSERT INTO subscriber_imports (id, account_id, list_id, status, total, payload, created_at)
     VALUES ($1, $2, $3, 'queued', $4, $5, $6) RETURNING ${COLUMNS}`,
    [i.id, i.accountId, i.listId, i.total, i.payload, i.now],
  );
  return rows[0];
}

export async function selectImport(db: Queryable, accountId: string, id: string): Promise<ImportRow | null> {
  const { rows } = await db.query<ImportRow>(`SELECT ${COLUMNS} FROM subscriber_imports WHERE account_id = $1 AND id = $2`, [accountId, id]);
  return rows[0] ?? null;
}

export async function selectImportPage(db: Queryable, accountId: string, page: Page): Promise<ImportRow[]> {
  const k = keyset(page, 'id', 2);
  const { rows } = await db.query<ImportRow>(
    `SELECT ${COLUMNS} FROM subscriber_imports WHERE account_id = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT $${2 + k.params.length}`,
    [accountId, ...k.params, page.limit + 1],
  );
  return rows;
}

/**
 * Claims the oldest import that is queued, or running under an expired lease (its worker
 * died), or the given one only when `id` is set (the CLI runs its own import). One statement:
 * the inner SELECT … FOR UPDATE SKIP LOCKED picks a row no other claimer holds, the UPDATE
 * takes the lease and counts the attempt.
 * Claim shape 3 of docs/architecture.md#background-jobs-one-claimlease-pattern.
 */
export async function claimImport(db: Queryable, c: { workerId: string; now: Date; leaseUntil: Date; id?: string }): Promise<ImportRow | null> {
  const { rows } = await db.query<ImportRow>(
    `UPDATE subscriber_imports SET status = 'running', locked_by = $1, locked_until = $3, attempts = attempts + 1,
            started_at = coalesce(started_at, $2)
      WHERE id = (
        SELECT id FROM subscriber_imports
         WHERE status IN ('queued', 'running') AND (locked_until IS NULL OR locked_until < $2)
           AND ($4::text IS NULL OR id = $4::text)
         ORDER BY id LIMIT 1
         FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`,
    [c.workerId, c.now, c.leaseUntil, c.id ?? null],
  );
  return rows[0] ?? null;
}

export async function selectImportPayload(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ payload: string | null }>('SELECT payload FROM subscriber_imports WHERE id = $1', [id]);
  return rows[0]?.payload ?? null;
}

/**
 * Records one batch: counters, new row errors (kept up to MAX_STORED_ERRORS) and the
 * checkpoint, and renews the lease. Run in the batch's transaction, so the subscribers and
 * the checkpoint commit together. Fenced on locked_by: false means another worker took the
 * job over (this one stalled past its lease), and the caller must roll the batch back.
 */
export async function advanceImport(
  db: Queryable,
  id: string,
  workerId: string,
  b: { checkpoint: number; created: number; updated: number; skipped: number; errors: ImportRowError[]; leaseUntil: Date },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE subscriber_imports SET checkpoint = $3, created = created + $4, updated = updated + $5, skipped = skipped + $6,
            error_count = error_count + jsonb_array_length($7::jsonb),
            errors = errors || (SELECT coalesce(jsonb_agg(e ORDER BY i), '[]'::jsonb)
                                  FROM jsonb_array_elements($7::jsonb) WITH ORDINALITY AS t(e, i)
                                 WHERE i <= ${MAX_STORED_ERRORS} - jsonb_array_length(errors)),
            locked_until = $8
      WHERE id = $1 AND locked_by = $2 AND status = 'running'`,
    [id, workerId, b.checkpoint, b.created, b.updated, b.skipped, JSON.stringify(b.errors), b.leaseUntil],
  );
  return rowCount === 1;
}

// The payload is dropped once the job ends: the counters and errors are the record.
export async function finishImport(db: Queryable, id: string, workerId: string, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE subscriber_imports SET status = 'completed', finished_at = $3, payload = NULL, locked_by = NULL, locked_until = NULL
      WHERE id = $1 AND locked_by = $2 AND status = 'running'`,
    [id, workerId, now],
  );
  return rowCount === 1;
}

/**
 * After an unexpected error: with attempts left, the lease is shortened to `retryAt` so the
 * job is claimed again from its checkpoint; otherwise it fails for good.
 */
export async function releaseFailedImport(
  db: Queryable,
  id: string,
  workerId: string,
  r: { message: string; final: boolean; retryAt: Date; now: Date },
): Promise<void> {
  // Every parameter is typed: an untyped `CASE WHEN $4 THEN NULL ELSE $5 END` made this
  // statement fail itself, leaving a failed import `running` for ever.
  await db.query(
    `UPDATE subscriber_imports SET failure = $3::text,
            status = CASE WHEN $4::boolean THEN 'failed' ELSE status END,
            finished_at = CASE WHEN $4::boolean THEN $6::timestamptz ELSE finished_at END,
            payload = CASE WHEN $4::boolean THEN NULL ELSE payload END,
            locked_until = CASE WHEN $4::boolean THEN NULL ELSE $5::timestamptz END
      WHERE id = $1 AND locked_by = $2`,
    [id, workerId, r.message, r.final, r.retryAt, r.now],
  );
}
