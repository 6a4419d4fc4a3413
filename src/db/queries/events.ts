import { notifySoon } from '../notify.js';
import { afterCommit, type Queryable } from '../pool.js';

export interface EventRow {
  seq: number;
  id: string;
  account_id: string;
  message_id: string | null;
  type: string;
  email: string;
  url: string | null;
  data: Record<string, unknown>;
  occurred_at: Date;
  /** Set for events of campaign messages (migration 012). */
  campaign_id?: string | null;
}

/**
 * Inserts many events in one statement (arrays unnested server-side), so a batch of delivery
 * outcomes costs one round trip. Callers pass the transaction that makes the change the
 * events describe: that is what makes the events table a reliable outbox. Webhook
 * dispatchers are woken once it commits.
 */
export async function insertEvents(
  db: Queryable,
  rows: { id: string; accountId: string; messageId: string | null; type: string; email: string; url: string | null; data: Record<string, unknown>; occurredAt: Date }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO events (id, account_id, message_id, type, email, url, data, occurred_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[], $8::timestamptz[])`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.accountId),
      rows.map((r) => r.messageId),
      rows.map((r) => r.type),
      rows.map((r) => r.email),
      rows.map((r) => r.url),
      rows.map((r) => JSON.stringify(r.data)),
      rows.map((r) => r.occurredAt),
    ],
  );
  afterCommit(db, (pool) => notifySoon(pool, 'postline_events'));
}

// The timeline of one message, oldest first.
export async function eventsOfMessage(db: Queryable, accountId: string, messageId: string): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    'SELECT * FROM events WHERE account_id = $1 AND message_id = $2 ORDER BY occurred_at, seq',
    [accountId, messageId],
  );
  return rows;
}

// The timelines of the recipient rows of one send together, oldest first.
export async function eventsOfMessages(db: Queryable, accountId: string, messageIds: string[]): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    'SELECT * FROM events WHERE account_id = $1 AND message_id = ANY($2::text[]) ORDER BY occurred_at, seq',
    [accountId, messageIds],
  );
  return rows;
}
