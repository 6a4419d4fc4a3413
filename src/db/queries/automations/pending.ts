import type { Queryable } from '../../pool.js';
import { takeOldest } from './queue.js';

export interface PendingTriggerRow {
  seq: number;
  account_id: string;
  event: string;
  email: string;
  data: Record<string, unknown>;
  queued_at: Date;
}

/**
 * Queues `subscriber.created` for these new subscribers of an import batch, one statement,
 * in the batch's transaction. The data is what a single create fires with (subscriberId,
 * lists, status), read after the batch's memberships were written. Nothing is queued when
 * the account has no active automation listening for the event (automations_trigger index),
 * so imports into accounts without automations pay one index probe per batch.
 */
export async function queueSubscriberCreated(db: Queryable, accountId: string, subscriberIds: string[], now: Date): Promise<number> {
  if (subscriberIds.length === 0) return 0;
  const { rowCount } = await db.query(
    `INSERT INTO automation_pending_triggers (account_id, event, email, data, queued_at)
     SELECT s.account_id, 'subscriber.created', s.email,
            jsonb_build_object('subscriberId', s.id, 'status', s.status,
              'lists', to_jsonb(array(SELECT m.list_id FROM subscriber_lists m WHERE m.subscriber_id = s.id ORDER BY m.list_id))),
            $3
       FROM subscribers s
      WHERE s.account_id = $1 AND s.id = ANY($2::text[])
        AND EXISTS (SELECT 1 FROM automations a WHERE a.account_id = $1 AND a.trigger_event = 'subscriber.created' AND a.status = 'active')
      ORDER BY s.email_key`,
    [accountId, subscriberIds, now],
  );
  return rowCount ?? 0;
}

/**
 * Queues built-in events for addresses of an account whose subscribers an import changed
 * (subscriber.unsubscribed), one statement, when the account has an active automation for
 * the event: the same rule as queueSubscriberCreated.
 */
export async function queueBuiltInEvents(db: Queryable, accountId: string, event: string, items: { email: string; data: Record<string, unknown> }[], now: Date): Promise<number> {
  if (items.length === 0) return 0;
  const { rowCount } = await db.query(
    `INSERT INTO automation_pending_triggers (account_id, event, email, data, queued_at)
     SELECT $1, $2, i.email, i.data, $5
       FROM unnest($3::text[], $4::jsonb[]) WITH ORDINALITY AS i(email, data, ord)
      WHERE EXISTS (SELECT 1 FROM automations a WHERE a.account_id = $1 AND a.trigger_event = $2 AND a.status = 'active')
      ORDER BY i.ord`,
    [accountId, event, items.map((i) => i.email), items.map((i) => JSON.stringify(i.data)), now],
  );
  return rowCount ?? 0;
}

/**
 * Takes up to `limit` queued triggers, oldest first, deleting them in the caller's
 * transaction: the runs they start commit with the deletion, or a rollback puts them back.
 * SKIP LOCKED lets workers take side by side.
 */
export async function takePendingTriggers(db: Queryable, limit: number): Promise<PendingTriggerRow[]> {
  return takeOldest<PendingTriggerRow>(db, 'automation_pending_triggers', 'seq', limit);
}
