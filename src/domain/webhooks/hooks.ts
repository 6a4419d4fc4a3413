/**
 * Webhook subscriptions and the rules of a webhook delivery (docs/architecture.md#events-and-webhooks, docs/webhooks.md):
 * what a hook may subscribe to and point at, how a request is built and signed, and what each
 * answer means for the batch (delivered, retried with backoff, dropped, or the hook disabled).
 */
import { inSandbox } from '../../db/sandbox.js';
import { notifySoon } from '../../db/notify.js';
import { finishPage, type Page } from '../../db/pagination.js';
import { createHmac, randomBytes } from 'node:crypto';
import type { Config } from '../../config.js';
import { afterCommit, type Queryable } from '../../db/pool.js';
import {
  deleteHookRow, enableHookRow, insertDelivery, selectHookAccount, insertHook, selectDeliveryPage, selectHook, selectHookPage, updateHookSecret,
  type DeliveryRow, type HookRow,
} from '../../db/queries/hooks.js';
import { invalid, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { decryptSecret, encryptSecret } from '../../mail/keyring.js';
import type { BatchOutcome } from '../../queue/webhooks.js';
import { EVENT_TYPES, type ApiEvent, type EventType } from '../events.js';
import { guardedPost, ForbiddenTargetError, resolveAllowedAddresses, type PostResult, type Resolver } from './ssrf.js';

/** Short names accepted in `events` (docs/architecture.md#events-and-webhooks), each standing for one or more types. */
export const EVENT_SHORT_NAMES: Record<string, EventType[]> = {
  bounce: ['hard_bounce', 'soft_bounce'],
  complaint: ['spam'],
  unsub: ['unsubscribe'],
};
export const BATCH_SIZE = 500;
export const REQUEST_TIMEOUT_MS = 10_000;
/** Wait after the 1st, 2nd, … failed attempt of a batch; after the last, the hook is disabled. */
export const RETRY_SCHEDULE_MS = [10e3, 60e3, 5 * 60e3, 30 * 60e3, 2 * 3600e3, 6 * 3600e3, 12 * 3600e3, 24 * 3600e3];
const MAX_RETRY_AFTER_MS = 24 * 3600e3;
const MAX_URL_LENGTH = 2048;
const SECRET_PURPOSE = 'webhook-secret';
export const USER_AGENT = 'Postline-Webhooks/1';

export interface Hook {
  id: string;
  url: string;
  events: EventType[];
  status: 'active' | 'disabled';
  disabledReason: string | null;
  createdAt: string;
}

export interface HookDelivery {
  id: string;
  attemptedAt: string;
  attempt: number;
  outcome: DeliveryRow['outcome'];
  statusCode: number | null;
  durationMs: number;
  eventCount: number;
  firstEventId: string | null;
  lastEventId: string | null;
  error: string | null;
  nextAttemptAt: string | null;
}

function toHook(r: HookRow): Hook {
  return {
    id: r.id,
    url: r.url,
    events: r.events as EventType[],
    status: r.status,
    disabledReason: r.disabled_reason,
    createdAt: r.created_at.toISOString(),
  };
}

function toDelivery(r: DeliveryRow): HookDelivery {
  return {
    id: r.id,
    attemptedAt: r.attempted_at.toISOString(),
    attempt: r.attempt,
    outcome: r.outcome,
    statusCode: r.status_code,
    durationMs: r.duration_ms,
    eventCount: r.event_count,
    firstEventId: r.first_event_id,
    lastEventId: r.last_event_id,
    error: r.error,
    nextAttemptAt: r.next_attempt_at?.toISOString() ?? null,
  };
}

/** Types and short names → the distinct event types, in canonical order. Unknown names are a 422 naming them. */
export function normaliseEventNames(names: string[]): EventType[] {
  if (names.length === 0) throw invalid('events', 'must name at least one event type');
  const wanted = new Set<EventType>();
  const unknown: string[] = [];
  for (const name of names) {
    const n = name.trim().toLowerCase();
    if ((EVENT_TYPES as readonly string[]).includes(n)) wanted.add(n as EventType);
    else if (EVENT_SHORT_NAMES[n]) EVENT_SHORT_NAMES[n].forEach((t) => wanted.add(t));
    else unknown.push(name);
  }
  if (unknown.length > 0) {
    const known = [...EVENT_TYPES, ...Object.keys(EVENT_SHORT_NAMES)];
    throw invalid('events', `unknown event type${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => JSON.stringify(u)).join(', ')}; use ${known.join(', ')}`);
  }
  return EVENT_TYPES.filter((t) => wanted.has(t));
}

/**
 * A webhook target: an absolute http(s) URL without credentials, at most 2048 characters,
 * whose host resolves only to public addresses (unless private targets are allowed).
 */
export async function validateHookUrl(raw: string, opts: { allowPrivate: boolean; resolve?: Resolver }): Promise<URL> {
  if (raw.length > MAX_URL_LENGTH) throw invalid('url', `must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url', `must use http or https, not ${url.protocol.replace(':', '')}`);
  if (url.username || url.password) throw invalid('url', 'must not contain credentials (user:password@); authenticate deliveries by their signature');
  if (!url.hostname) throw invalid('url', 'must name a host');
  if (!opts.allowPrivate) {
    try {
      await resolveAllowedAddresses(url, opts);
    } catch (err) {
      // Name the switch: a developer pointing a hook at a local receiver needs it, nobody else does.
      if (err instanceof ForbiddenTargetError) {
        throw invalid('url', `is refused: ${err.message} (for development, POSTLINE_WEBHOOK_ALLOW_PRIVATE=true allows private and loopback targets)`);
      }
      throw err;
    }
  }
  return url;
}

/** `whsec_` and 32 random bytes, base64url. */
export function newHookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export function hookSecret(encrypted: string, config: Pick<Config, 'secret'>): string {
  return decryptSecret(encrypted, config.secret, SECRET_PURPOSE);
}

/** `sha256=` + lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the whole `whsec_…` string. */
export function signatureOf(body: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The request body and headers of one delivery. The signature covers exactly these bytes. */
export function webhookRequest(hookId: string, events: ApiEvent[], secret: string): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(JSON.stringify({ hookId, events }));
  return {
    body,
    headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, 'x-svc-signature': signatureOf(body, secret) },
  };
}

export async function createHook(
  db: Queryable,
  config: Pick<Config, 'secret' | 'webhookAllowPrivate'>,
  accountId: string,
  input: { url: string; events: string[] },
  now: Date,
  resolve?: Resolver,
): Promise<Hook & { secret: string }> {
  const events = normaliseEventNames(input.events);
  await validateHookUrl(input.url, { allowPrivate: config.webhookAllowPrivate, resolve });
  const secret = newHookSecret();
  const row = await insertHook(db, {
    id: newId('hook'), accountId, url: input.url, events, secret: encryptSecret(secret, config.secret, SECRET_PURPOSE), createdAt: now,
  });
  return { ...toHook(row), secret };
}

export async function getHook(db: Queryable, accountId: string, id: string): Promise<Hook> {
  const row = await selectHook(db, accountId, id);
  if (!row) throw notFound(`hook ${id}`);
  return toHook(row);
}

export async function listHooks(db: Queryable, accountId: string, page: Page): Promise<{ data: Hook[]; nextCursor: string | null }> {
  const { data, nextCursor } = finishPage(await selectHookPage(db, accountId, page), page, (r) => r.id);
  return { data: data.map(toHook), nextCursor };
}

export async function deleteHook(db: Queryable, accountId: string, id: string): Promise<void> {
  if (!(await deleteHookRow(db, accountId, id))) throw notFound(`hook ${id}`);
}

/** POST /hooks/{id}/enable and `postline hooks enable`: a disabled hook receives events again. */
export async function enableHook(db: Queryable, accountId: string, id: string, now: Date): Promise<Hook> {
  const row = await enableHookRow(db, accountId, id, now);
  if (!row) throw notFound(`hook ${id}`);
  afterCommit(db, (pool) => notifySoon(pool, 'postline_events'));
  return toHook(row);
}

/** The account a hook belongs to (operator tools given only a hook id). */
export async function accountOfHook(db: Queryable, id: string): Promise<string> {
  const accountId = await selectHookAccount(db, id);
  if (!accountId) throw notFound(`hook ${id}`);
  return accountId;
}

/** A new secret, effective for the next batch; the old one stops signing at once. */
export async function rotateHookSecret(db: Queryable, config: Pick<Config, 'secret'>, accountId: string, id: string): Promise<{ secret: string }> {
  const secret = newHookSecret();
  if (!(await updateHookSecret(db, accountId, id, encryptSecret(secret, config.secret, SECRET_PURPOSE)))) throw notFound(`hook ${id}`);
  return { secret };
}

export async function listHookDeliveries(
  db: Queryable,
  accountId: string,
  hookId: string,
  page: Page,
): Promise<{ data: HookDelivery[]; nextCursor: string | null }> {
  if (!(await selectHook(db, accountId, hookId))) throw notFound(`hook ${hookId}`);
  const { data, nextCursor } = finishPage(await selectDeliveryPage(db, hookId, page), page, (r) => r.id);
  return { data: data.map(toDelivery), nextCursor };
}

/** Seconds or an HTTP date → milliseconds from now, clamped to [1 s, 24 h]; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now: Date): number | null {
  if (!header) return null;
  const v = header.trim();
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - now.getTime();
  if (!Number.isFinite(ms)) return null;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(1000, ms));
}

/** What an attempt's result means for its batch, given the failed attempts before it. */
export function classifyAttempt(result: PostResult, attemptsBefore: number, now: Date): BatchOutcome {
  if (result.kind === 'response') {
    const s = result.status;
    if (s >= 200 && s < 300) return { kind: 'delivered' };
    if (s === 410) return { kind: 'disabled', reason: 'the receiver answered 410 Gone', dropBatch: false };
    const retryable = s >= 500 || s === 408 || s === 429;
    if (!retryable) return { kind: 'dropped' }; // other 4xx, and 3xx: redirects are not followed
  }
  if (attemptsBefore >= RETRY_SCHEDULE_MS.length) {
    return { kind: 'disabled', reason: `no successful delivery after ${attemptsBefore + 1} attempts over about 2 days`, dropBatch: false };
  }
  const hinted = result.kind === 'response' ? retryAfterMs(result.retryAfter, now) : null;
  return { kind: 'retry', retryAt: new Date(now.getTime() + (hinted ?? RETRY_SCHEDULE_MS[attemptsBefore])) };
}

/** The attempt log's text for a result that was not a 2xx. */
export function describeResult(result: PostResult): string | null {
  if (result.kind !== 'response') return result.error;
  if (result.status >= 200 && result.status < 300) return null;
  if (result.status >= 300 && result.status < 400) return `HTTP ${result.status}: redirect to ${result.location ?? '(no Location)'} not followed`;
  return `HTTP ${result.status}${result.body ? `: ${result.body.slice(0, 200)}` : ''}`;
}

export interface TestDeliveryResult {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  event: ApiEvent;
}

/**
 * Sends one signed, made-up event of the hook's first subscribed type now, outside the queue:
 * it neither waits for nor disturbs the hook's batches, and never disables it. Logged in the
 * attempt log with outcome `test`.
 */
export async function sendTestDelivery(
  db: Queryable,
  config: Pick<Config, 'secret' | 'webhookAllowPrivate'>,
  accountId: string,
  hookId: string,
  now: Date,
  opts: { timeoutMs?: number; resolve?: Resolver } = {},
): Promise<TestDeliveryResult> {
  const row = await selectHook(db, accountId, hookId);
  if (!row) throw notFound(`hook ${hookId}`);
  const type = row.events[0] as EventType;
  const event: ApiEvent = {
    id: newId('evt'),
    type,
    email: 'recipient@example.com',
    messageId: newId('msg'),
    ...(type === 'click' ? { url: 'https://example.com/' } : {}),
    occurredAt: now.toISOString(),
    data: { test: true },
  };
  const { body, headers } = webhookRequest(row.id, [event], hookSecret(row.secret, config));
  // A test key sends nothing (db/sandbox.ts): the answer says so, as a request never made.
  if (inSandbox()) return { delivered: false, statusCode: null, durationMs: 0, error: 'not sent: test keys perform no real action', event };
  const result = await guardedPost(new URL(row.url), body, headers, {
    allowPrivate: config.webhookAllowPrivate, timeoutMs: opts.timeoutMs ?? REQUEST_TIMEOUT_MS, resolve: opts.resolve,
  });
  const statusCode = result.kind === 'response' ? result.status : null;
  const delivered = statusCode !== null && statusCode >= 200 && statusCode < 300;
  const error = describeResult(result);
  await insertDelivery(db, {
    id: newId('dlv'), hookId: row.id, attemptedAt: now, attempt: 1, outcome: 'test', statusCode, durationMs: result.durationMs,
    eventCount: 1, firstEventId: event.id, lastEventId: event.id, error, nextAttemptAt: null,
  });
  return { delivered, statusCode, durationMs: result.durationMs, error, event };
}
