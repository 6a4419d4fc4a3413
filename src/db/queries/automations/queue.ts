import type { Queryable } from '../../pool.js';

/**
 * Takes up to `limit` rows of a queue table, oldest first by `seqColumn`, deleting them in the
 * caller's transaction: what they start commits with the deletion, or a rollback puts them back.
 * SKIP LOCKED lets workers take side by side. Table and column are constants of the callers.
 * Claim shape 1 of docs/architecture.md#background-jobs-one-claimlease-pattern.
 */
export async function takeOldest<T>(db: Queryable, table: 'automation_pending_triggers' | 'automation_event_queue', seqColumn: 'seq' | 'event_seq', limit: number): Promise<T[]> {
  const { rows } = await db.query<Record<string, unknown>>(
    `DELETE FROM ${table}
      WHERE ${seqColumn} IN (SELECT ${seqColumn} FROM ${table} ORDER BY ${seqColumn} LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [limit],
  );
  // bigint arrives as a string; the queue order is the number.
  return rows.map((r) => ({ ...r, [seqColumn]: Number(r[seqColumn]) })).sort((a, b) => (a[seqColumn] as number) - (b[seqColumn] as number)) as T[];
}
