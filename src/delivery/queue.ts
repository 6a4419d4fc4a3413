import type { Queryable } from '../db/pool.js';
import { SETTLE_STOPPED } from '../db/queries/campaigns/campaigns.js';
import { MESSAGE_WITH_CONTENT, type MessageRow } from '../db/queries/messages.js';

/**
 * Claims up to `limit` due messages for this worker. FOR UPDATE SKIP LOCKED lets many workers
 * claim concurrently without blocking each other or taking the same row. A claimed message
 * becomes 'sending' with next_attempt_at = lease expiry: if the worker dies, the row is due
 * again when the lease ends and another worker claims it (never deleted). Oldest due first.
 *
 * A campaign paused or cancelled while its message was in flight leaves that row 'sending'
 * (pause holds and cancel removes only unsent rows). If its worker died, the expired lease is
 * not claimed: the pause holds the row, the cancel removes it and counts it as cancelled, as
 * if it had been unsent then. Locking the campaign row waits for a resume or cancel under way
 * and re-checks its status (as settleStrayDeferrals does); an update lock rather than a share
 * lock, so two claimers counting cancelled rows of one campaign queue instead of deadlocking.
 * The settling itself is SETTLE_STOPPED, shared with settleStrayDeferrals.
 *
 * Two streams: `stream: 'transactional'` claims only messages of no campaign (through
 * messages_due_without_campaign), `'campaign'` only campaign mail; the engine claims the first
 * before the second, so transactional mail never waits behind a campaign.
 * `skipDomains` are recipient domains whose destination is suspended or full (traffic
 * shaping): their mail stays queued for the workers with room for it.
 */
export async function claimDueMessages(
  db: Queryable,
  workerId: string,
  now: Date,
  limit: number,
  leaseMs: number,
  opts: { stream?: 'transactional' | 'campaign' | 'all'; skipDomains?: string[] } = {},
): Promise<MessageRow[]> {
  const stream = opts.stream ?? 'all';
  const params: unknown[] = [workerId, now, limit, leaseMs];
  let filter = stream === 'transactional' ? ' AND campaign_id IS NULL' : stream === 'campaign' ? ' AND campaign_id IS NOT NULL' : '';
  if (opts.skipDomains && opts.skipDomains.length > 0) {
    params.push(opts.skipDomains);
    filter += ' AND NOT (to_domain = ANY($5::text[]))';
  }
  const { rows } = await db.query<MessageRow>(
    `WITH due AS (
       SELECT id, status, campaign_id FROM messages
        WHERE status IN ('queued', 'scheduled', 'deferred', 'sending') AND next_attempt_at <= $2${filter}
        ORDER BY next_attempt_at
        LIMIT $3
        FOR UPDATE SKIP LOCKED
     ),
     stopped AS (
       SELECT d.id, c.status AS campaign_status
         FROM due d JOIN campaigns c ON c.id = d.campaign_id
        WHERE d.status = 'sending' AND c.status IN ('paused', 'cancelled')
          FOR NO KEY UPDATE OF c
     ),
     ${SETTLE_STOPPED},
     claimed AS (
       UPDATE messages m
          SET status = 'sending',
              locked_by = $1,
              next_attempt_at = $2::timestamptz + make_interval(secs => $4::double precision / 1000),
              attempts = m.attempts + 1,
              first_attempt_at = coalesce(m.first_attempt_at, $2)
         FROM due WHERE m.id = due.id AND NOT EXISTS (SELECT 1 FROM stopped s WHERE s.id = due.id)
       RETURNING m.*
     )
     -- cc/bcc copies carry no content of their own: read it from the group's row (the join
     -- sees that row as of the statement's snapshot; content never changes after accept).
     SELECT ${MESSAGE_WITH_CONTENT}
       FROM claimed m LEFT JOIN messages g ON g.id = m.group_id AND m.group_id <> m.id`,
    params,
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

/**
 * Gives claimed messages back untried (traffic shaping had no room for them, or their
 * destination was suspended meanwhile): the claim's attempt is undone, the message is due at
 * `nextAttemptAt`. Same `locked_by` guard as completeMessages.
 */
export async function releaseClaims(db: Queryable, workerId: string, released: { id: string; nextAttemptAt: Date }[]): Promise<number> {
  if (released.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE messages m
        SET status = CASE WHEN m.attempts <= 1 THEN 'queued' ELSE 'deferred' END,
            first_attempt_at = CASE WHEN m.attempts <= 1 THEN NULL ELSE m.first_attempt_at END,
            attempts = m.attempts - 1, next_attempt_at = r.next_attempt_at, locked_by = NULL
       FROM unnest($2::text[], $3::timestamptz[]) AS r(id, next_attempt_at)
      WHERE m.id = r.id AND m.locked_by = $1 AND m.status = 'sending'`,
    [workerId, released.map((r) => r.id), released.map((r) => r.nextAttemptAt)],
  );
  return rowCount ?? 0;
}

// Who holds leases on this host: the few distinct holders of rows in 'sending' (the partial
// index messages_due covers the status filter). starts_with, not LIKE: host names may hold '_'.
export async function leaseHoldersOn(db: Queryable, hostPrefix: string): Promise<string[]> {
  const { rows } = await db.query<{ locked_by: string }>(
    `SELECT DISTINCT locked_by FROM messages
      WHERE status = 'sending' AND locked_by IS NOT NULL AND starts_with(locked_by, $1)`,
    [hostPrefix],
  );
  return rows.map((r) => r.locked_by);
}

/**
 * Makes the leases of dead holders due now, so the next claim (by anyone) takes them. The
 * `locked_by` stays until then: a holder that somehow still ran could not record over the
 * newer attempt, since the claim replaces it.
 */
export async function releaseLeasesOf(db: Queryable, holders: string[], now: Date): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE messages SET next_attempt_at = $2
      WHERE status = 'sending' AND locked_by = ANY($1::text[]) AND next_attempt_at > $2`,
    [holders, now],
  );
  return rowCount ?? 0;
}
