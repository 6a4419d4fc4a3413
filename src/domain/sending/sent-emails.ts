import { finishPage, keyset, type Page } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import { eventsOfMessages } from '../../db/queries/events.js';
import { getMessage, listMessages, recipientsOfGroup, type MessageRow, type RecipientRow } from '../../db/queries/messages.js';
import { notFound } from '../../errors.js';
import { toApiEvent, type ApiEvent } from '../events.js';

/** GET /api/v1/emails: one send (one row per envelope recipient; this is one of them). */
export interface EmailSummary {
  id: string;
  status: string;
  from: { email: string; name: string | null };
  to: string;
  cc: string[];
  subject: string;
  tags: string[];
  templateId: string | null;
  attempts: number;
  lastResponse: string | null;
  lastMx: string | null;
  nextAttemptAt: string | null;
  scheduledAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

/** The bounce that ended a recipient's delivery, as its `bounce` field shows it. */
export interface EmailBounce {
  type: 'hard_bounce' | 'soft_bounce';
  reason: string;
  category: string;
  status: string | null;
  diagnostic: string | null;
  mta: string | null;
  occurredAt: string;
}

export interface EmailRecipient {
  id: string;
  email: string;
  type: 'to' | 'cc' | 'bcc';
  status: string;
  attempts: number;
  lastResponse: string | null;
  lastMx: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  bounce: EmailBounce | null;
}

/** GET /api/v1/emails/{id}: the whole send, every recipient's status and the event timeline. */
export interface EmailDetail extends EmailSummary {
  groupId: string;
  bcc: string[];
  recipients: EmailRecipient[];
  html: string | null;
  text: string | null;
  bounce: EmailBounce | null;
  events: ApiEvent[];
  /** The source address the message of the requested id last left from (docs/sending-identity.md). */
  source: { name: string; address: string } | null;
}

/** Statuses in which a message still waits for an attempt: only these show `nextAttemptAt`. */
const WAITING = new Set(['queued', 'scheduled', 'deferred', 'sending']);

function toSummary(m: Omit<MessageRow, 'html' | 'text' | 'attachments'>): EmailSummary {
  return {
    id: m.id,
    status: m.status,
    from: { email: m.from_email, name: m.from_name },
    to: m.to_email,
    cc: m.cc,
    subject: m.subject,
    tags: m.tags,
    templateId: m.template_id,
    attempts: m.attempts,
    lastResponse: m.last_response,
    lastMx: m.last_mx,
    nextAttemptAt: WAITING.has(m.status) ? m.next_attempt_at.toISOString() : null,
    scheduledAt: m.scheduled_at?.toISOString() ?? null,
    deliveredAt: m.delivered_at?.toISOString() ?? null,
    createdAt: m.created_at.toISOString(),
  };
}

function toRecipient(r: RecipientRow, bounce: EmailBounce | null): EmailRecipient {
  return {
    bounce,
    id: r.id,
    email: r.to_email,
    type: r.recipient_type ?? 'to',
    status: r.status,
    attempts: r.attempts,
    lastResponse: r.last_response,
    lastMx: r.last_mx,
    nextAttemptAt: WAITING.has(r.status) ? r.next_attempt_at.toISOString() : null,
    deliveredAt: r.delivered_at?.toISOString() ?? null,
  };
}

/** The latest hard or soft bounce of one message (one recipient) in a send's timeline. */
function lastBounce(events: ApiEvent[], messageId: string): EmailBounce | null {
  const e = events.findLast((x) => x.messageId === messageId && (x.type === 'hard_bounce' || x.type === 'soft_bounce'));
  const b = e?.data.bounce as Record<string, unknown> | undefined;
  if (!e || !b || typeof b.reason !== 'string') return null;
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    type: e.type as 'hard_bounce' | 'soft_bounce', reason: b.reason, category: text(b.category) ?? 'unknown', status: text(b.status),
    diagnostic: text(b.diagnostic), mta: text(b.mta), occurredAt: e.occurredAt,
  };
}

export interface SentEmailFilter {
  status?: string;
  to?: string;
  tag?: string;
}

/** One page of an account's sent emails, newest first by default. */
export async function listSentEmails(
  db: Queryable, accountId: string, filter: SentEmailFilter, page: Page,
): Promise<{ data: EmailSummary[]; nextCursor: string | null }> {
  const rows = await listMessages(db, accountId, filter, { ...keyset(page, 'id', 5), limit: page.limit });
  const { data, nextCursor } = finishPage(rows, page, (r) => r.id);
  return { data: data.map(toSummary), nextCursor };
}

/** One send by any of its recipients' ids: its `to` row's fields, every recipient's status and all their events. */
export async function getSentEmail(db: Queryable, accountId: string, id: string): Promise<EmailDetail> {
  const m = await getMessage(db, accountId, id);
  if (!m) throw notFound(`email ${id}`);
  const groupId = m.group_id ?? m.id;
  const recipients = await recipientsOfGroup(db, accountId, groupId);
  const head = groupId === m.id ? m : ((await getMessage(db, accountId, groupId)) ?? m);
  const events = (await eventsOfMessages(db, accountId, recipients.map((r) => r.id))).map(toApiEvent);
  return {
    ...toSummary(head),
    groupId,
    bcc: head.bcc,
    recipients: recipients.map((r) => toRecipient(r, lastBounce(events, r.id))),
    html: head.html,
    text: head.text,
    bounce: lastBounce(events, m.id),
    events,
    source: m.source_name && m.source_address ? { name: m.source_name, address: m.source_address } : null,
  };
}
