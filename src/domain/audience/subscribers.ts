import { type Page } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import { insertConfirmations } from '../../db/queries/confirmations.js';
import {
  deleteMemberships, deleteSubscriber as deleteSubscriberRow, insertMemberships, selectSubscriberById, selectSubscriberByKey,
  selectSubscriberPage, selectSuppressionReason, updateStatusByKey, updateSubscriber as updateSubscriberRow, upsertSubscribers,
  type SubscriberFilter, type SubscriberRow, type SubscriberStatus,
} from '../../db/queries/subscribers.js';
import { AppError, invalid, notFound, type FieldError } from '../../errors.js';
import { hasPrefix, newId } from '../../ids.js';
import { emailKey, parseEmailAddress } from '../email-address.js';
import { requireLists } from './lists.js';
import { exitRunsOnUnsubscribe, fireBuiltInEvent } from '../automations/trigger.js';
import type { SubscriberWrites } from '../automations/steps.js';

/**
 * Subscribers: one per address and account (matched case-insensitively, docs/architecture.md#identifiers-and-data), in any
 * number of lists. Writes here run several statements: call them inside a transaction.
 *
 * Status: `active`, `unconfirmed` (double opt-in pending), `unsubscribed`, `bounced`,
 * `complained`. A suppression of the address with reason unsubscribe / complaint / hard_bounce
 * imposes the matching status on every write, and the suppression feature calls
 * `applySuppressionToSubscribers` / `reactivateSubscribers` when entries come and go.
 */

export type { SubscriberStatus } from '../../db/queries/subscribers.js';
export const SUBSCRIBER_STATUSES: readonly SubscriberStatus[] = ['active', 'unconfirmed', 'unsubscribed', 'bounced', 'complained'];
/** Statuses a client may set; bounced and complained come only from what mailboxes report. */
export const SETTABLE_STATUSES: readonly SubscriberStatus[] = ['active', 'unconfirmed', 'unsubscribed'];

export const SUBSCRIBER_LIMITS = { name: 200, attributesBytes: 16 * 1024, attributeKeys: 100, attributeKey: 100 } as const;

/** Suppression reason → the subscriber status it imposes. Other reasons impose none. */
export const STATUS_OF_SUPPRESSION: Readonly<Record<string, SubscriberStatus>> = {
  unsubscribe: 'unsubscribed',
  complaint: 'complained',
  hard_bounce: 'bounced',
};

export interface Subscriber {
  id: string;
  email: string;
  name: string | null;
  status: SubscriberStatus;
  attributes: Record<string, unknown>;
  lists: string[];
  createdAt: string;
  updatedAt: string;
}

export interface SubscriberInput {
  email: string;
  name?: string | null;
  /** A list to add the subscriber to (the spec's field). */
  list?: string;
  lists?: string[];
  attributes?: Record<string, unknown>;
  status?: SubscriberStatus;
}

export interface SubscriberChanges {
  email?: string;
  name?: string | null;
  status?: SubscriberStatus;
  attributes?: Record<string, unknown>;
  list?: string;
  addLists?: string[];
  removeLists?: string[];
}

export function toSubscriber(r: SubscriberRow): Subscriber {
  return {
    id: r.id,
    email: r.email,
    name: r.name,
    status: r.status,
    attributes: r.attributes,
    lists: r.lists,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** Checks the fields of one subscriber; `at` prefixes error fields (imports use "rows[3]."). */
export function checkSubscriberFields(
  input: { email?: unknown; name?: unknown; status?: unknown; attributes?: unknown },
  at = '',
): { errors: FieldError[]; email?: { email: string; emailKey: string } } {
  const errors: FieldError[] = [];
  let email: { email: string; emailKey: string } | undefined;
  if (input.email !== undefined) {
    const parsed = typeof input.email === 'string' ? parseEmailAddress(input.email) : { ok: false as const, message: 'must be a string' };
    if (parsed.ok) email = { email: parsed.value.address, emailKey: parsed.value.key };
    else errors.push({ field: `${at}email`, message: parsed.message });
  }
  if (input.name !== undefined && input.name !== null) {
    if (typeof input.name !== 'string') errors.push({ field: `${at}name`, message: 'must be a string' });
    else if (input.name.length > SUBSCRIBER_LIMITS.name) errors.push({ field: `${at}name`, message: `must be at most ${SUBSCRIBER_LIMITS.name} characters` });
  }
  if (input.status !== undefined && !SETTABLE_STATUSES.includes(input.status as SubscriberStatus)) {
    errors.push({ field: `${at}status`, message: `must be one of ${SETTABLE_STATUSES.join(', ')} (bounced and complained are set from bounces and complaints)` });
  }
  if (input.attributes !== undefined) {
    const a = input.attributes;
    if (typeof a !== 'object' || a === null || Array.isArray(a)) errors.push({ field: `${at}attributes`, message: 'must be a JSON object' });
    else {
      const keys = Object.keys(a);
      if (keys.length > SUBSCRIBER_LIMITS.attributeKeys) errors.push({ field: `${at}attributes`, message: `must have at most ${SUBSCRIBER_LIMITS.attributeKeys} keys` });
      else if (keys.some((k) => k.length === 0 || k.length > SUBSCRIBER_LIMITS.attributeKey)) {
        errors.push({ field: `${at}attributes`, message: `keys must be 1 to ${SUBSCRIBER_LIMITS.attributeKey} characters` });
      } else if (Buffer.byteLength(JSON.stringify(a)) > SUBSCRIBER_LIMITS.attributesBytes) {
        errors.push({ field: `${at}attributes`, message: `must be at most ${SUBSCRIBER_LIMITS.attributesBytes} bytes as JSON` });
      }
    }
  }
  return { errors, email };
}

function throwIfAny(errors: FieldError[]): void {
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

function cleanName(name: string | null | undefined): string | null {
  const n = name?.trim();
  return n ? n : null;
}

/**
 * Create, or update the subscriber with this address (the connectors' upsert): given fields
 * replace stored ones, attributes are merged (null removes a key), lists are added. New
 * subscribers of a double opt-in list are `unconfirmed` unless a status is given, and a
 * confirmation mail is queued for them.
 */
export async function upsertSubscriber(
  db: Queryable,
  accountId: string,
  input: SubscriberInput,
  now: Date = new Date(),
): Promise<{ subscriber: Subscriber; created: boolean }> {
  const { errors, email } = checkSubscriberFields(input);
  throwIfAny(errors);
  const listIds = [...new Set([...(input.list !== undefined ? [input.list] : []), ...(input.lists ?? [])])];
  const { doubleOptIn } = await requireLists(db, accountId, listIds, input.list !== undefined ? 'list' : 'lists');
  const [row] = await upsertSubscribers(db, accountId, [{
    id: newId('sub'),
    email: email!.email,
    emailKey: email!.emailKey,
    name: cleanName(input.name),
    nameSet: input.name !== undefined,
    status: input.status ?? null,
    attributes: input.attributes ?? null,
  }], { newStatus: doubleOptIn.size > 0 ? 'unconfirmed' : 'active', now });
  await insertMemberships(db, accountId, [row.id], listIds, now);
  await insertConfirmations(db, accountId, [row.id], [...doubleOptIn], now);
  const subscriber = toSubscriber((await selectSubscriberById(db, accountId, row.id))!);
  if (row.inserted) {
    await fireBuiltInEvent(db, accountId, 'subscriber.created', subscriber.email, { subscriberId: subscriber.id, lists: subscriber.lists, status: subscriber.status }, now);
  }
  return { subscriber, created: row.inserted };
}

/** The writes of automations' update_subscriber steps, passed to their engine. */
export const subscriberWritesForAutomations: SubscriberWrites = {
  upsert: (db, accountId, input, now) => upsertSubscriber(db, accountId, input, now),
  removeLists: async (db, accountId, subscriberId, lists, now) => {
    await updateSubscriber(db, accountId, subscriberId, { removeLists: lists }, now);
  },
};

/** A subscriber by id (`sub_…`) or by address (any case). */
async function find(db: Queryable, accountId: string, idOrEmail: string): Promise<SubscriberRow | null> {
  if (hasPrefix(idOrEmail, 'sub')) return selectSubscriberById(db, accountId, idOrEmail);
  const key = emailKey(idOrEmail);
  return key ? selectSubscriberByKey(db, accountId, key) : null;
}

export async function getSubscriber(db: Queryable, accountId: string, idOrEmail: string): Promise<Subscriber> {
  const row = await find(db, accountId, idOrEmail);
  if (!row) throw notFound(`subscriber ${idOrEmail}`);
  return toSubscriber(row);
}

/** limit + 1 subscribers from the page's position; the HTTP layer trims and makes the cursor. */
export async function listSubscribers(db: Queryable, accountId: string, filter: SubscriberFilter, page: Page): Promise<Subscriber[]> {
  return (await selectSubscriberPage(db, accountId, filter, page)).map(toSubscriber);
}

/**
 * Changes the given fields and list memberships. Setting a status other than the one a
 * suppression imposes is refused (recipient_suppressed): re-subscribing goes through
 * DELETE /api/v1/suppression.
 */
export async function updateSubscriber(
  db: Queryable,
  accountId: string,
  idOrEmail: string,
  changes: SubscriberChanges,
  now: Date = new Date(),
): Promise<Subscriber> {
  const row = await find(db, accountId, idOrEmail);
  if (!row) throw notFound(`subscriber ${idOrEmail}`);
  const { errors, email } = checkSubscriberFields(changes);
  throwIfAny(errors);
  const key = email?.emailKey ?? row.email_key;
  if (email && key !== row.email_key && (await selectSubscriberByKey(db, accountId, key))) {
    throw new AppError('conflict', `another subscriber already has the address ${email.email}`, { errors: [{ field: 'email', message: 'belongs to another subscriber' }] });
  }
  if (changes.status !== undefined) {
    const imposed = STATUS_OF_SUPPRESSION[(await selectSuppressionReason(db, accountId, key)) ?? ''];
    if (imposed && imposed !== changes.status) {
      throw new AppError('recipient_suppressed', `${email?.email ?? row.email} is on the suppression list, so its status stays ${imposed}; remove it with DELETE /api/v1/suppression to re-subscribe`);
    }
  }
  const add = [...new Set([...(changes.list !== undefined ? [changes.list] : []), ...(changes.addLists ?? [])])];
  const remove = [...new Set(changes.removeLists ?? [])];
  const { doubleOptIn } = await requireLists(db, accountId, add, changes.list !== undefined ? 'list' : 'addLists');
  await requireLists(db, accountId, remove, 'removeLists');
  await updateSubscriberRow(db, accountId, row.id, {
    ...(email ? { email } : {}),
    ...(changes.name !== undefined ? { name: cleanName(changes.name) } : {}),
    ...(changes.status !== undefined ? { status: changes.status } : {}),
    ...(changes.attributes !== undefined ? { attributes: changes.attributes } : {}),
  }, now);
  await deleteMemberships(db, accountId, row.id, remove);
  await insertMemberships(db, accountId, [row.id], add, now);
  await insertConfirmations(db, accountId, [row.id], [...doubleOptIn], now);
  const updated = toSubscriber((await selectSubscriberById(db, accountId, row.id))!);
  if (changes.status === 'unsubscribed' && row.status !== 'unsubscribed') {
    await exitRunsOnUnsubscribe(db, accountId, updated.email, 'unsubscribe', now);
    await fireBuiltInEvent(db, accountId, 'subscriber.unsubscribed', updated.email, { subscriberId: updated.id, reason: 'status' }, now);
  }
  return updated;
}

export async function deleteSubscriber(db: Queryable, accountId: string, idOrEmail: string): Promise<void> {
  const row = await find(db, accountId, idOrEmail);
  if (!row || !(await deleteSubscriberRow(db, accountId, row.id))) throw notFound(`subscriber ${idOrEmail}`);
}

function keyOf(email: string): string {
  return emailKey(email) ?? email.trim().toLowerCase();
}

/**
 * For the suppression feature (suppression API, unsubscribe link, FBL, hard bounces): the
 * subscriber with this address takes the status the reason imposes (unsubscribe →
 * unsubscribed, complaint → complained, hard_bounce → bounced; other reasons change nothing).
 * Call it in the transaction that adds the suppression. Returns the number of subscribers changed.
 */
export async function applySuppressionToSubscribers(db: Queryable, accountId: string, email: string, reason: string, now: Date = new Date()): Promise<number> {
  const status = STATUS_OF_SUPPRESSION[reason];
  if (!status) return 0;
  return updateStatusByKey(db, accountId, keyOf(email), status, null, now);
}

/**
 * For DELETE /api/v1/suppression (re-subscribe): a subscriber with this address that is
 * unsubscribed, bounced or complained becomes active again. Call it in the transaction that
 * removes the suppression. Returns the number of subscribers changed.
 */
export async function reactivateSubscribers(db: Queryable, accountId: string, email: string, now: Date = new Date()): Promise<number> {
  return updateStatusByKey(db, accountId, keyOf(email), 'active', ['unsubscribed', 'bounced', 'complained'], now);
}

/** The subscriber a preview renders for (id or address); an unknown one is a bad `subscriberId` field, not a missing page. */
export async function previewSubscriber(db: Queryable, accountId: string, idOrEmail: string): Promise<Subscriber> {
  const row = await find(db, accountId, idOrEmail);
  if (!row) throw invalid('subscriberId', 'is not a subscriber of this account');
  return toSubscriber(row);
}
