/**
 * The webhook queue over Postgres (docs/decisions/0006-webhook-outbox.md). `hook_queue` holds
 * one row per (hook, event) still to deliver, written by a trigger in the transaction that
 * records the event. A worker leases a *hook* (one batch in flight per hook keeps its order),
 * reads that hook's oldest ≤ 500 queued events, posts them, and records the outcome.
 */
import type { Queryable } from '../db/pool.js';
import type { EventRow } from '../db/queries/events.js';
import { DELIVERY_INSERT, deliveryParams, type NewDelivery } from '../db/queries/hooks.js';

export interface ClaimedHook {
  id: string;
  account_id: string;
  url: string;
  secret: string;
  /** Failed attempts of the head batch before this one. */
  attempts: number;
  lease_token: string;
}

/**
 * Leases up to `limit` active hooks that are due and have something queued. SKIP LOCKED lets
 * workers claim side by side without waiting on each other. NO KEY UPDATE, because every
 * transaction that records an event for the hook holds a KEY SHARE lock on it (the queue's
 * foreign key) until it commits; FOR UPDATE would skip the hook all that time. The lease is
 * next_attempt_at = now + leaseMs with a fresh token, so a hook whose worker died is due again
 * when the lease ends, and the dead worker's late completion (wrong token) changes nothing.
 * Longest-waiting hooks first, so a hook with a deep backlog cannot starve the others.
 * Claim shape 2 of docs/architecture.md#background-jobs-one-claimlease-pattern.
 */
export async function claimDueHooks(db: Queryable, now: Date, limit: number, leaseMs: number, token: string): Promise<ClaimedHook[]> {
  const { rows } = await db.query<ClaimedHook>(
    `WITH due AS (
       SELECT h.id FROM hooks h
        WHERE h.status = 'active' AND h.next_attempt_at <= $1
          AND EXISTS (SELECT 1 FROM hook_queue q WHERE q.hook_id = h.id)
        ORDER BY h.next_attempt_at
        LIMIT $2
        FOR NO KEY UPDATE SKIP LOCKED
     )
     UPDATE hooks h
        SET next_attempt_at = $1::timestamptz + make_interval(secs => $3::double precision / 1000),
            lease_token = $4
       FROM due WHERE h.id = due.id
     RETURNING h.id, h.account_id, h.url, h.secret, h.attempts, h.lease_token`,
    [now, limit, leaseMs, token],
  );
  return rows;
}

export interface QueuedEvent {
  /** Always present: the queue row to remove once the batch is answered. */
  event_seq: number;
  /** Null only if the event row itself was removed meanwhile (nothing left to send). */
  event: EventRow | null;
}

/**
 * The hook's oldest queued events, in seq order, at most `limit`. The queue rows are picked
 * first (hook_queue_head, migration 006: an index walk whatever the table statistics say) and
 * each event fetched by (account_id, seq) through
 * events_account_seq. The LIMIT 1 keeps the lateral subquery from being flattened into a
 * join, which the planner would run as a hash or merge join over every event of the account:
 * cost growing with the account's history instead of with the batch. `afterSeq` reads the
 * batch after one still in flight (prefetch); anything below it that commits late is picked
 * up when the hook is next claimed.
 */
export async function loadHookBatch(db: Queryable, hook: { id: string; account_id: string }, limit: number, afterSeq = 0): Promise<QueuedEvent[]> {
  const { rows } = await db.query<EventRow & { event_seq: number; found: boolean }>(
    `SELECT q.event_seq, e.id IS NOT NULL AS found, e.*
       FROM hook_queue_head($1, $4, $3) AS q (event_seq)
       LEFT JOIN LATERAL (SELECT * FROM events WHERE account_id = $2 AND seq = q.event_seq LIMIT 1) e ON TRUE
      ORDER BY q.event_seq`,
    [hook.id, hook.account_id, limit, afterSeq],
  );
  return rows.map(({ event_seq, found, ...e }) => ({ event_seq: Number(event_seq), event: found ? { ...e, seq: Number(event_seq) } : null }));
}

export type BatchOutcome =
  /** 2xx: the batch is done; the next one may go at once. */
  | { kind: 'delivered' }
  /** Retryable failure: the same batch again at `retryAt`. */
  | { kind: 'retry'; retryAt: Date }
  /** Final failure (4xx, or retries exhausted): the batch is dropped; the next one may go at once. */
  | { kind: 'dropped' }
  /** 410 Gone or retries exhausted: the hook stops; its queue is kept. */
  | { kind: 'disabled'; reason: string; dropBatch: boolean };

/**
 * Records a batch's outcome, the hook's next state and the attempt log row in one statement.
 * Queue rows are deleted by their exact seqs, never by range: an event of a transaction that
 * committed late may have a smaller seq than this batch's last and must not be lost with it.
 * The hook update is fenced by the lease token; the log row is written regardless.
 * `keepLeaseUntil` (after a delivered batch with more waiting) extends the lease instead of
 * releasing it, so the worker goes on with the next batch without claiming again. Returns
 * whether the lease was still this worker's.
 */
export async function completeHookBatch(
  db: Queryable,
  hook: { id: string; lease_token: string },
  seqs: number[],
  outcome: BatchOutcome,
  now: Date,
  delivery: NewDelivery,
  keepLeaseUntil: Date | null = null,
): Promise<boolean> {
  const drop = outcome.kind === 'delivered' || outcome.kind === 'dropped' || (outcome.kind === 'disabled' && outcome.dropBatch);
  const keep = keepLeaseUntil !== null && outcome.kind === 'delivered';
  const next = outcome.kind === 'retry' ? outcome.retryAt : keep ? keepLeaseUntil : now;
  const status = outcome.kind === 'disabled' ? 'disabled' : 'active';
  const reason = outcome.kind === 'disabled' ? outcome.reason : null;
  const failed = outcome.kind === 'retry';
  const { rows } = await db.query<{ held: boolean }>(
    `WITH done AS (
       DELETE FROM hook_queue WHERE $13::boolean AND hook_id = $2 AND event_seq = ANY ($14::bigint[])
     ), hook AS (
       UPDATE hooks
          SET attempts = CASE WHEN $15::boolean THEN attempts + 1 ELSE 0 END,
              next_attempt_at = $16, lease_token = CASE WHEN $20::boolean THEN lease_token END,
              status = $17, disabled_reason = coalesce($18, disabled_reason),
              disabled_at = CASE WHEN $17 = 'disabled' THEN $3 ELSE disabled_at END
        WHERE id = $2 AND lease_token = $19
        RETURNING 1
     ), logged AS (
       ${DELIVERY_INSERT}
     )
     SELECT EXISTS (SELECT 1 FROM hook) AS held`,
    [...deliveryParams(delivery), drop, seqs, failed, next, status, reason, hook.lease_token, keep],
  );
  return rows[0].held;
}
