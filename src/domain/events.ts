import { insertEvents, type EventRow } from '../db/queries/events.js';
import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';

export const EVENT_TYPES = ['sent', 'delivered', 'open', 'click', 'hard_bounce', 'soft_bounce', 'spam', 'unsubscribe', 'deferred'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  accountId: string;
  messageId: string | null;
  type: EventType;
  email: string;
  /** Click events only: the clicked link. */
  url?: string | null;
  /** Bounce reason, SMTP response, MX host, user agent… */
  data?: Record<string, unknown>;
  occurredAt: Date;
}

/** An event as the API and webhooks show it (docs/architecture.md#events-and-webhooks). */
export interface ApiEvent {
  id: string;
  type: EventType;
  email: string;
  messageId: string | null;
  url?: string;
  occurredAt: string;
  data: Record<string, unknown>;
  /** Events of campaign messages: the campaign (an addition to the event item of docs/architecture.md#events-and-webhooks). */
  campaignId?: string;
}

/**
 * Records events in the caller's transaction. Test keys must never reach here: callers in
 * sandbox mode record nothing (spec: "a test key records no events").
 */
export async function recordEvents(db: Queryable, events: NewEvent[]): Promise<string[]> {
  const rows = events.map((e) => ({
    id: newId('evt'),
    accountId: e.accountId,
    messageId: e.messageId,
    type: e.type,
    email: e.email,
    url: e.type === 'click' ? (e.url ?? null) : null,
    data: e.data ?? {},
    occurredAt: e.occurredAt,
  }));
  await insertEvents(db, rows);
  return rows.map((r) => r.id);
}

export function toApiEvent(r: EventRow): ApiEvent {
  return {
    id: r.id,
    type: r.type as EventType,
    email: r.email,
    messageId: r.message_id,
    ...(r.type === 'click' && r.url ? { url: r.url } : {}),
    occurredAt: r.occurred_at.toISOString(),
    data: r.data,
    ...(r.campaign_id ? { campaignId: r.campaign_id } : {}),
  };
}
