import type { BouncedRecipient } from '../../mail/bounces/read.js';
import type { Queryable } from '../pool.js';
import type { MessageRow } from './messages.js';

/**
 * What comes back from mailboxes (migrations/007_inbound.sql): complaint reports, mail to
 * VERP addresses and the DSN recipients read from it, plus the two message-side statements
 * the inbound path needs (a per-message lock and the asynchronous bounce).
 */

export interface FblReportInsert {
  id: string;
  receivedAt: Date;
  source: 'http' | 'smtp';
  raw: Buffer;
  feedbackType: string | null;
  userAgent: string | null;
  originalMessageId: string | null;
  matchedBy: 'message_id' | 'return_path' | 'address' | null;
  messageId: string | null;
  accountId: string | null;
  email: string | null;
  eventId: string | null;
  parseError: string | null;
}

// One row per report received; `matched` is derived so it cannot disagree with message_id.
export async function insertFblReport(db: Queryable, r: FblReportInsert): Promise<void> {
  await db.query(
    `INSERT INTO fbl_reports (id, received_at, source, raw, feedback_type, user_agent, original_message_id, matched, matched_by,
                              message_id, account_id, email, event_id, parse_error)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text IS NOT NULL, $9, $8, $10, $11, $12, $13)`,
    [r.id, r.receivedAt, r.source, r.raw, r.feedbackType, r.userAgent, r.originalMessageId, r.messageId, r.matchedBy, r.accountId, r.email, r.eventId, r.parseError],
  );
}

export interface InboundMessageInsert {
  id: string;
  receivedAt: Date;
  envelopeFrom: string;
  envelopeTo: string;
  raw: Buffer;
  kind: 'bounce' | 'delivered' | 'auto_reply' | 'unsubscribe' | 'other';
  /** How the mail was read (ReturnedMail.format). */
  format: string;
  messageId: string | null;
  accountId: string | null;
  parseError: string | null;
}

export async function insertInboundMessage(db: Queryable, m: InboundMessageInsert): Promise<void> {
  await db.query(
    `INSERT INTO inbound_messages (id, received_at, envelope_from, envelope_to, raw, kind, format, message_id, account_id, parse_error)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [m.id, m.receivedAt, m.envelopeFrom, m.envelopeTo, m.raw, m.kind, m.format, m.messageId, m.accountId, m.parseError],
  );
}

/** One recipient a bounce names, as read, plus what we matched and recorded for it. */
export interface BounceReportInsert {
  recipient: BouncedRecipient;
  /** hard = dead address, soft = any other failure or delay, delivered, other. */
  classification: 'hard' | 'soft' | 'delivered' | 'other';
  email: string | null;
  eventId: string | null;
}

// All recipients of one bounce in one statement (arrays unnested server-side).
export async function insertBounceReports(
  db: Queryable,
  inboundId: string,
  ref: { messageId: string | null; accountId: string | null },
  rows: BounceReportInsert[],
): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: BounceReportInsert) => T) => rows.map(f);
  await db.query(
    `INSERT INTO bounce_reports (inbound_id, message_id, account_id, final_recipient, original_recipient, action, status,
                                diagnostic_code, remote_mta, classification, email, event_id, reason, reply_code, dead)
     SELECT $1, $2, $3, * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                                     $12::text[], $13::text[], $14::int[], $15::boolean[])`,
    [
      inboundId, ref.messageId, ref.accountId,
      col((r) => r.recipient.email), col((r) => r.recipient.originalRecipient), col((r) => r.recipient.action), col((r) => r.recipient.status),
      col((r) => r.recipient.diagnostic), col((r) => r.recipient.remoteMta), col((r) => r.classification), col((r) => r.email), col((r) => r.eventId),
      col((r) => (r.classification === 'delivered' ? null : r.recipient.reason)), col((r) => r.recipient.reply), col((r) => r.recipient.dead),
    ],
  );
}

/**
 * The message, locked until the caller's transaction ends. Inbound effects on one message
 * (a complaint, a bounce, an unsubscribe) take this lock first, so two copies of the same
 * report arriving at once are applied one after the other and the second sees the first's
 * event ("at most one spam event per message" holds without a unique index on events).
 * The delivery worker's claim uses SKIP LOCKED, so it is never blocked by this.
 */
export async function lockMessage(db: Queryable, id: string): Promise<MessageRow | null> {
  const { rows } = await db.query<MessageRow>('SELECT * FROM messages WHERE id = $1 FOR UPDATE', [id]);
  return rows[0] ?? null;
}

// Served by events_message (message_id, occurred_at); a message has a handful of events.
export async function messageHasEvent(db: Queryable, messageId: string, type: string, email?: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM events WHERE message_id = $1 AND type = $2 AND ($3::text IS NULL OR lower(email) = lower($3)) LIMIT 1`,
    [messageId, type, email ?? null],
  );
  return rows.length > 0;
}

/**
 * The asynchronous bounce: a message the receiving side accepted (or that we still retry)
 * turns out undeliverable. Messages not yet handed over (queued, scheduled, sending) are left
 * alone: the worker owns their state, and a bounce cannot truly precede the hand-over. Returns
 * false when nothing changed (already bounced, or not in a state a DSN can follow).
 */
export async function markMessageBounced(db: Queryable, id: string, response: string | null): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE messages SET status = 'bounced', last_response = coalesce($2, last_response)
      WHERE id = $1 AND status IN ('delivered', 'deferred', 'failed')`,
    [id, response],
  );
  return (rowCount ?? 0) > 0;
}
