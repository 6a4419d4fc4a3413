import { notifySoon } from '../notify.js';
import { afterCommit, type Queryable } from '../pool.js';

/**
 * The tracking endpoints' statements. Clicks and opens are the hottest writes a recipient can
 * cause, so they are written in batches (db/group-commit.ts): ONE statement per batch finds
 * the messages and inserts the events in arrival order; the webhook dispatchers are woken
 * after it commits. Message bodies are never loaded.
 */

export interface TrackedVisit {
  /** The new event's id. */
  id: string;
  messageId: string;
  data: Record<string, unknown>;
  occurredAt: Date;
}

const visitArrays = (visits: TrackedVisit[]) => [
  visits.map((v) => v.id),
  visits.map((v) => v.messageId),
  visits.map((v) => JSON.stringify(v.data)),
  visits.map((v) => v.occurredAt),
];

// Click events, each addressed to its message's recipient. A visit whose message does not
// exist (sandbox ids, deleted accounts) inserts nothing: false in its place, and a 404.
export async function insertClickEvents(db: Queryable, visits: (TrackedVisit & { url: string })[]): Promise<boolean[]> {
  const { rows } = await db.query<{ ids: string[] | null }>(
    `WITH v AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::timestamptz[], $5::text[])
         WITH ORDINALITY AS v(id, message_id, data, occurred_at, url, ord)
     ),
     e AS (
       INSERT INTO events (id, account_id, message_id, type, email, url, data, occurred_at)
       SELECT v.id, m.account_id, m.id, 'click', m.to_email, v.url, v.data, v.occurred_at
         FROM v JOIN messages m ON m.id = v.message_id
        ORDER BY v.ord
       RETURNING id
     )
     SELECT (SELECT array_agg(id) FROM e) AS ids`,
    [...visitArrays(visits), visits.map((v) => v.url)],
  );
  const inserted = new Set(rows[0].ids ?? []);
  if (inserted.size > 0) afterCommit(db, (pool) => notifySoon(pool, 'postline_events'));
  return visits.map((v) => inserted.has(v.id));
}

// Open events, each marked `unique` when it is its message's first open. The unique index
// events_first_open (migration 005) arbitrates: every visit is first tried as the first open
// with ON CONFLICT DO NOTHING, which also settles races with other batches and processes (the
// loser waits for the winner's commit, then skips) and duplicates within this batch (the
// earliest, by ORDER BY, wins); the rest are inserted as repeats. Repeats of a batch follow
// its first opens in seq order, so across messages that order is only as exact as the batch
// is long (milliseconds); within a message it is exact. null: no such message.
export async function insertOpenEvents(db: Queryable, visits: TrackedVisit[]): Promise<({ unique: boolean } | null)[]> {
  const { rows } = await db.query<{ first: string[] | null; again: string[] | null }>(
    `WITH v AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::timestamptz[])
         WITH ORDINALITY AS v(id, message_id, data, occurred_at, ord)
     ),
     first AS (
       INSERT INTO events (id, account_id, message_id, type, email, url, data, occurred_at)
       SELECT v.id, m.account_id, m.id, 'open', m.to_email, NULL, v.data || '{"unique": true}'::jsonb, v.occurred_at
         FROM v JOIN messages m ON m.id = v.message_id
        ORDER BY v.ord
       ON CONFLICT (message_id) WHERE type = 'open' AND (data->>'unique') = 'true' DO NOTHING
       RETURNING id
     ),
     again AS (
       INSERT INTO events (id, account_id, message_id, type, email, url, data, occurred_at)
       SELECT v.id, m.account_id, m.id, 'open', m.to_email, NULL, v.data || '{"unique": false}'::jsonb, v.occurred_at
         FROM v JOIN messages m ON m.id = v.message_id
        WHERE v.id NOT IN (SELECT id FROM first)
        ORDER BY v.ord
       RETURNING id
     )
     SELECT (SELECT array_agg(id) FROM first) AS first, (SELECT array_agg(id) FROM again) AS again`,
    visitArrays(visits),
  );
  const first = new Set(rows[0].first ?? []);
  const again = new Set(rows[0].again ?? []);
  if (first.size + again.size > 0) afterCommit(db, (pool) => notifySoon(pool, 'postline_events'));
  return visits.map((v) => (first.has(v.id) ? { unique: true } : again.has(v.id) ? { unique: false } : null));
}

export interface UnsubscribeTargetRow {
  id: string;
  account_id: string;
  to_email: string;
  from_email: string;
  from_name: string | null;
}

// The message an unsubscribe POST is about, row-locked until the caller's transaction ends:
// concurrent POSTs of the same link queue here, so "already recorded?" is answered after
// the previous one committed. FOR NO KEY UPDATE: the weakest lock that conflicts with
// itself; it does not block inserts of rows that reference the message.
export async function lockMessageForUnsubscribe(tx: Queryable, messageId: string): Promise<UnsubscribeTargetRow | null> {
  const { rows } = await tx.query<UnsubscribeTargetRow>(
    'SELECT id, account_id, to_email, from_email, from_name FROM messages WHERE id = $1 FOR NO KEY UPDATE',
    [messageId],
  );
  return rows[0] ?? null;
}

// Whether the message's unsubscribe event exists (index events_message_unsubscribe).
export async function hasUnsubscribeEvent(db: Queryable, messageId: string): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM events WHERE message_id = $1 AND type = 'unsubscribe') AS found`,
    [messageId],
  );
  return rows[0].found;
}
