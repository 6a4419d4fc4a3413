import type { Queryable } from '../db/pool.js';
import type { MessageRow } from '../db/queries/messages.js';

/**
 * Claims up to `limit` due messages for this worker. FOR UPDATE SKIP LOCKED lets many workers
 * claim concurrently without blocking each other or taking the same row. A claimed message
 * becomes 'sending' with next_attempt_at = lease expiry: if the worker dies, the row is due
 * again when the lease ends and another worker claims it (never deleted). Oldest due first.
 */
export async function claimDueMessages(db: Queryable, workerId: string, now: Date, limit: number, leaseMs: number): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow>(
    `WITH due AS (
       SELECT id FROM messages
        WHERE status IN ('queued', 'scheduled', 'deferred', 'sending') AND next_attempt_at <= $2
        ORDER BY next_attempt_at
        LIMIT $3
        FOR UPDATE SKIP LOCKED
     )
     UPDATE messages m
        SET status = 'sending',
            locked_by = $1,
            next_attempt_at = $2::timestamptz + make_interval(secs => $4::double precision / 1000),
            attempts = m.attempts + 1,
            first_attempt_at = coalesce(m.first_attempt_at, $2)
       FROM due WHERE m.id = due.id
     RETURNING m.*`,
    [workerId, now, limit, leaseMs],
  );
  return rows;
}

export interface MessageOutcome {
  id: string;
  status: 'delivered' | 'deferred' | 'bounced' | 'failed';
  nextAttemptAt: Date;
  response: string;
  mx: string | null;
  deliveredAt: Date | null;
}

/**
 * Records many outcomes in one statement. The `locked_by` guard means a worker whose lease
 * expired (and whose message another worker has since claimed) cannot overwrite the newer
 * attempt's state. Returns the ids actually updated, so only those get events.
 */
export async function completeMessages(db: Queryable, workerId: string, outcomes: MessageOutcome[]): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(
    `UPDATE messages m
        SET status = o.status, next_attempt_at = o.next_attempt_at, last_response = o.response,
            last_mx = o.mx, delivered_at = o.delivered_at, locked_by = NULL
       FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::timestamptz[])
            AS o(id, status, next_attempt_at, response, mx, delivered_at)
      WHERE m.id = o.id AND m.locked_by = $1 AND m.status = 'sending'
     RETURNING m.id`,
    [
      workerId,
      outcomes.map((o) => o.id),
      outcomes.map((o) => o.status),
      outcomes.map((o) => o.nextAttemptAt),
      outcomes.map((o) => o.response),
      outcomes.map((o) => o.mx),
      outcomes.map((o) => o.deliveredAt),
    ],
  );
  return new Set(rows.map((r) => r.id));
}
