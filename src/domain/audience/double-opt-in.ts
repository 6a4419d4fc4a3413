import type { Queryable } from '../../db/pool.js';
import {
  confirmMembership, markConfirmationsSent as markSentRows, selectPendingConfirmations,
} from '../../db/queries/confirmations.js';
import { deriveKey } from '../../mail/keyring.js';
import { signPayload, verifyPayload } from '../tracking/tokens.js';

/**
 * Double opt-in, data side. A new member of a list with `doubleOptIn` is `unconfirmed`, and a
 * row in subscriber_confirmations (the outbox) asks for a confirmation mail. The mailer — wired
 * by the sending pipeline — takes rows with `pendingConfirmations` inside a transaction, queues
 * one message per row carrying `confirmUrl`, and closes them with `markConfirmationsSent` in
 * the same transaction. Following the link (GET /confirm/{token}) makes the subscriber active.
 *
 * The link is a signed token (domain/tracking/tokens.ts, kind "d") over subscriber and list
 * ids, with a key derived from POSTLINE_SECRET for this purpose only; it expires after
 * CONFIRMATION_TTL_DAYS so an old mail cannot confirm an address years later.
 */

export const CONFIRMATION_TTL_DAYS = 30;
const TOKEN_KIND = 'd';
const DAY_MS = 24 * 60 * 60 * 1000;

export interface ConfirmationSecrets {
  /** POSTLINE_SECRET (config.secret). */
  secret: string;
  /** POSTLINE_BASE_URL (config.baseUrl), without a trailing slash. */
  baseUrl: string;
}

function tokenKey(secret: string): Buffer {
  return deriveKey(secret, 'double-opt-in');
}

export function confirmationToken(secret: string, subscriberId: string, listId: string, now: Date = new Date()): string {
  return signPayload(tokenKey(secret), TOKEN_KIND, [subscriberId, listId], { expiresAt: new Date(now.getTime() + CONFIRMATION_TTL_DAYS * DAY_MS) });
}

export function confirmationUrl(s: ConfirmationSecrets, subscriberId: string, listId: string, now: Date = new Date()): string {
  return `${s.baseUrl}/confirm/${confirmationToken(s.secret, subscriberId, listId, now)}`;
}

export type ConfirmOutcome =
  | { result: 'confirmed' | 'already_confirmed'; subscriberId: string; listId: string; status: string }
  | { result: 'invalid' };

/**
 * What GET /confirm/{token} does. A forged, altered or expired token, or one whose subscriber
 * or membership no longer exists, is `invalid`. A subscriber who unsubscribed or bounced
 * meanwhile keeps that status: only `unconfirmed` turns `active`.
 */
export async function confirmByToken(db: Queryable, secret: string, token: string, now: Date = new Date()): Promise<ConfirmOutcome> {
  const fields = verifyPayload(tokenKey(secret), TOKEN_KIND, token, { now });
  if (!fields || fields.length !== 2) return { result: 'invalid' };
  const [subscriberId, listId] = fields;
  const done = await confirmMembership(db, subscriberId, listId, now);
  if (!done) return { result: 'invalid' };
  return { result: done.confirmed ? 'confirmed' : 'already_confirmed', subscriberId, listId, status: done.status };
}

export interface PendingConfirmation {
  /** Outbox row id, for markConfirmationsSent. */
  id: number;
  accountId: string;
  subscriberId: string;
  email: string;
  name: string | null;
  listId: string;
  listName: string;
  /** The list's template for this mail; null = the built-in confirmation mail. */
  templateId: string | null;
  confirmUrl: string;
  queuedAt: string;
}

/**
 * Confirmation mails to send, oldest first, locked (FOR UPDATE SKIP LOCKED) until the calling
 * transaction ends: call inside the transaction that queues the messages.
 */
export async function pendingConfirmations(db: Queryable, s: ConfirmationSecrets, limit = 100, now: Date = new Date()): Promise<PendingConfirmation[]> {
  const rows = await selectPendingConfirmations(db, limit);
  return rows.map((r) => ({
    id: r.id,
    accountId: r.account_id,
    subscriberId: r.subscriber_id,
    email: r.email,
    name: r.name,
    listId: r.list_id,
    listName: r.list_name,
    templateId: r.confirmation_template_id,
    confirmUrl: confirmationUrl(s, r.subscriber_id, r.list_id, now),
    queuedAt: r.created_at.toISOString(),
  }));
}

/** Closes outbox rows once their message is queued (same transaction as pendingConfirmations). */
export async function markConfirmationsSent(db: Queryable, sent: { id: number; messageId: string | null }[], now: Date = new Date()): Promise<void> {
  await markSentRows(db, sent, now);
}
