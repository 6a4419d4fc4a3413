import type { Queryable } from '../pool.js';

/** How often one address may be sent a confirmation for one list (re-posted signup forms). */
export const CONFIRMATION_RESEND_INTERVAL = '1 hour';

/**
 * Queues a confirmation mail for every (subscriber, double opt-in list) pair where the
 * subscriber is an unconfirmed member, unless one is still unsent or was queued within the
 * resend interval: re-posting a signup form does not flood the address.
 */
export async function insertConfirmations(db: Queryable, accountId: string, subscriberIds: string[], listIds: string[], now: Date): Promise<number> {
  if (subscriberIds.length === 0 || listIds.length === 0) return 0;
  const { rowCount } = await db.query(
    `INSERT INTO subscriber_confirmations (account_id, subscriber_id, list_id, created_at)
     SELECT $1, s.id, m.list_id, $4
       FROM subscribers s
       JOIN subscriber_lists m ON m.subscriber_id = s.id AND m.list_id = ANY($3::text[])
       JOIN lists l ON l.id = m.list_id AND l.double_opt_in
      WHERE s.account_id = $1 AND s.id = ANY($2::text[]) AND s.status = 'unconfirmed'
        AND NOT EXISTS (
          SELECT 1 FROM subscriber_confirmations c
           WHERE c.subscriber_id = s.id AND c.list_id = m.list_id
             AND (c.sent_at IS NULL OR c.created_at > $4::timestamptz - interval '${CONFIRMATION_RESEND_INTERVAL}'))`,
    [accountId, subscriberIds, listIds, now],
  );
  return rowCount ?? 0;
}

export interface PendingConfirmationRow {
  id: number;
  account_id: string;
  subscriber_id: string;
  email: string;
  name: string | null;
  list_id: string;
  list_name: string;
  confirmation_template_id: string | null;
  created_at: Date;
}

/**
 * Unsent confirmations, oldest first, locked for the calling transaction; SKIP LOCKED lets
 * several mailers take disjoint batches. Rows whose subscriber is no longer unconfirmed
 * (confirmed by an earlier mail, unsubscribed, deleted) are not returned.
 * Claim shape 1 of docs/architecture.md#background-jobs-one-claimlease-pattern.
 */
export async function selectPendingConfirmations(db: Queryable, limit: number): Promise<PendingConfirmationRow[]> {
  const { rows } = await db.query<PendingConfirmationRow>(
    `SELECT c.id, c.account_id, c.subscriber_id, s.email, s.name, c.list_id, l.name AS list_name,
            l.confirmation_template_id, c.created_at
       FROM subscriber_confirmations c
       JOIN subscribers s ON s.id = c.subscriber_id AND s.status = 'unconfirmed'
       JOIN lists l ON l.id = c.list_id
      WHERE c.sent_at IS NULL
      ORDER BY c.id
      LIMIT $1
      FOR UPDATE OF c SKIP LOCKED`,
    [limit],
  );
  return rows;
}

// Confirmations that became moot (subscriber no longer unconfirmed) are closed with them,
// so the pending index does not keep them forever.
export async function markConfirmationsSent(db: Queryable, sent: { id: number; messageId: string | null }[], now: Date): Promise<void> {
  if (sent.length === 0) return;
  await db.query(
    `UPDATE subscriber_confirmations c SET sent_at = $3, message_id = x.message_id
       FROM unnest($1::bigint[], $2::text[]) AS x(id, message_id)
      WHERE c.id = x.id AND c.sent_at IS NULL`,
    [sent.map((s) => s.id), sent.map((s) => s.messageId), now],
  );
  await db.query(
    `UPDATE subscriber_confirmations c SET sent_at = $1
      WHERE c.sent_at IS NULL AND NOT EXISTS (SELECT 1 FROM subscribers s WHERE s.id = c.subscriber_id AND s.status = 'unconfirmed')`,
    [now],
  );
}

/**
 * Following a confirmation link: an unconfirmed member of the list becomes active. Returns
 * the subscriber's status afterwards, or null when the subscriber or the membership is gone.
 */
export async function confirmMembership(db: Queryable, subscriberId: string, listId: string, now: Date): Promise<{ status: string; confirmed: boolean } | null> {
  const { rows } = await db.query<{ status: string; confirmed: boolean }>(
    `WITH target AS (
       SELECT s.id, s.status FROM subscribers s
        WHERE s.id = $1 AND EXISTS (SELECT 1 FROM subscriber_lists m WHERE m.subscriber_id = s.id AND m.list_id = $2)
        FOR UPDATE OF s
     ), changed AS (
       UPDATE subscribers s SET status = 'active', updated_at = $3
         FROM target t WHERE s.id = t.id AND t.status = 'unconfirmed'
       RETURNING s.id
     )
     SELECT CASE WHEN EXISTS (SELECT 1 FROM changed) THEN 'active' ELSE t.status END AS status,
            EXISTS (SELECT 1 FROM changed) AS confirmed
       FROM target t`,
    [subscriberId, listId, now],
  );
  return rows[0] ?? null;
}
