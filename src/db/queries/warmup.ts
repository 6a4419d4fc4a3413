import type { Queryable } from '../pool.js';

// Takes one of today's `cap` sends of (source, provider), or none when they are all taken.
// The conditional upsert locks the row: concurrent reservations from any number of workers
// queue on it, and exactly `cap` of them succeed. The caller never passes a cap below 1.
export async function reserveWarmupSend(db: Queryable, r: { source: string; provider: string; day: string; cap: number }): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO warmup_counts AS w (source, provider, day, sent) VALUES ($1, $2, $3::date, 1)
     ON CONFLICT (source, provider, day) DO UPDATE SET sent = w.sent + 1 WHERE w.sent < $4
     RETURNING sent`,
    [r.source, r.provider, r.day, r.cap],
  );
  return rowCount === 1;
}

// Sent today per (source, provider), for `postline delivery status` and spill choices.
export async function warmupCountsOn(db: Queryable, day: string): Promise<{ source: string; provider: string; sent: number }[]> {
  const { rows } = await db.query('SELECT source, provider, sent FROM warmup_counts WHERE day = $1::date ORDER BY source, provider', [day]);
  return rows;
}

// Past days are history nobody reads: maintenance drops them.
export async function purgeWarmupCounts(db: Queryable, before: string): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM warmup_counts WHERE day < $1::date', [before]);
  return rowCount ?? 0;
}
