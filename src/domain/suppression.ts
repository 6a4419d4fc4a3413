import { GroupCommit } from '../db/group-commit.js';
import { finishPage, type Page } from '../db/pagination.js';
import type { Queryable } from '../db/pool.js';
import {
  deleteSuppression, insertSuppression, insertSuppressions, selectSuppressedPairs, selectSuppression, selectSuppressionPage, selectSuppressions,
  type SuppressionRow,
} from '../db/queries/suppressions.js';
import { AppError, invalid, type FieldError } from '../errors.js';
import { newId } from '../ids.js';
import { emailKey, parseEmailAddress, type EmailAddress } from './email-address.js';

/**
 * The suppression list: per account, the addresses it must not send to. This module is the
 * one door to it: nothing else reads or writes the table. Sending asks `isSuppressed` /
 * `suppressedAmong`; hard bounces, complaints and unsubscribes call `suppress` and the
 * re-subscribe calls `unsuppress`, both through domain/audience/address-status.ts, which keeps the
 * subscribers' statuses in step. Addresses are matched by their key (case-insensitive, see
 * email-address.ts) and stored as first given.
 */

export const SUPPRESSION_REASONS = ['manual', 'unsubscribe', 'hard_bounce', 'complaint', 'import'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/** Most entries one bulk add accepts; the batch is written in one statement. */
export const MAX_BULK_SUPPRESSIONS = 10_000;
const PARSE_SLICE = 500;

export interface SuppressionEntry {
  id: string;
  /** As given when it was added. */
  email: string;
  reason: SuppressionReason;
  /** Why, in words, when the writer knew (e.g. the SMTP response of a hard bounce). */
  detail: string | null;
  /** For `hard_bounce`: the bounce reason that showed the address dead (docs/bounces.md), e.g. `user_unknown`. */
  bounceReason: string | null;
  createdAt: string;
}

/** GET /suppression?email=: the answer for one address, present or not. */
export interface SuppressionCheck {
  email: string;
  suppressed: boolean;
  reason: SuppressionReason | null;
  createdAt: string | null;
}

function toEntry(r: SuppressionRow): SuppressionEntry {
  return { id: r.id, email: r.email, reason: r.reason as SuppressionReason, detail: r.detail, bounceReason: r.bounce_reason, createdAt: r.created_at.toISOString() };
}

function isReason(value: string): value is SuppressionReason {
  return (SUPPRESSION_REASONS as readonly string[]).includes(value);
}

function requireAddress(field: string, email: string): EmailAddress {
  const r = parseEmailAddress(email);
  if (!r.ok) throw invalid(field, r.message);
  return r.value;
}

function requireReason(field: string, reason: string): SuppressionReason {
  if (!isReason(reason)) throw invalid(field, `must be one of ${SUPPRESSION_REASONS.join(', ')}`);
  return reason;
}

/**
 * The send-time check: the entry blocking this address for this account, or null. An address
 * that does not parse is never on the list (only valid addresses are stored), so it is null
 * here; refusing it is the sender's validation's job.
 */
export async function isSuppressed(db: Queryable, accountId: string, email: string): Promise<SuppressionEntry | null> {
  const key = emailKey(email);
  if (!key) return null;
  const row = await selectSuppression(db, accountId, key);
  return row ? toEntry(row) : null;
}

/**
 * For batches (campaign fan-out, batch send): which of `emails` are suppressed, as a map from
 * each given address (as passed) to its entry. One query however many addresses.
 */
export async function suppressedAmong(db: Queryable, accountId: string, emails: readonly string[]): Promise<Map<string, SuppressionEntry>> {
  const keyOf = new Map<string, string>();
  for (const e of emails) {
    const key = emailKey(e);
    if (key) keyOf.set(e, key);
  }
  const byKey = new Map((await selectSuppressions(db, accountId, [...new Set(keyOf.values())])).map((r) => [r.email_key, toEntry(r)]));
  const out = new Map<string, SuppressionEntry>();
  for (const [e, key] of keyOf) {
    const entry = byKey.get(key);
    if (entry) out.set(e, entry);
  }
  return out;
}

/**
 * The send API's suppression check where the storing statement does not make it (test keys,
 * accounts with a quota: domain/sending/sending.ts), batched across concurrent requests: the
 * lookups that arrive while one is in flight are answered together by the next query, so N
 * concurrent sends cost about N / batch round trips instead of N. A lookup reads committed
 * state when its batch runs, as a lone query would.
 */
export class SuppressionLookups {
  private readonly lookups: GroupCommit<{ accountId: string; keys: string[] }, Set<string>>;

  constructor(db: Queryable) {
    this.lookups = new GroupCommit(async (items) => {
      const accountIds: string[] = [];
      const keys: string[] = [];
      for (const item of items) {
        for (const k of item.keys) {
          accountIds.push(item.accountId);
          keys.push(k);
        }
      }
      const hits = new Set((await selectSuppressedPairs(db, accountIds, keys)).map((r) => `${r.account_id} ${r.email_key}`));
      return items.map((item) => new Set(item.keys.filter((k) => hits.has(`${item.accountId} ${k}`))));
    });
  }

  /** Which of `emails` are on the account's list (as given; addresses that do not parse never are). */
  async suppressedAmong(accountId: string, emails: readonly string[]): Promise<Set<string>> {
    const keyOf = new Map<string, string>();
    for (const e of emails) {
      const key = emailKey(e);
      if (key) keyOf.set(e, key);
    }
    if (keyOf.size === 0) return new Set();
    const hit = await this.lookups.submit({ accountId, keys: [...new Set(keyOf.values())] });
    return new Set([...keyOf].filter(([, key]) => hit.has(key)).map(([e]) => e));
  }
}

/** The API's check: validates the address, then answers present or not (nulls when absent). */
export async function checkSuppression(db: Queryable, accountId: string, email: string): Promise<SuppressionCheck> {
  const address = requireAddress('email', email);
  const row = await selectSuppression(db, accountId, address.key);
  return { email: address.address, suppressed: row !== null, reason: (row?.reason as SuppressionReason) ?? null, createdAt: row?.created_at.toISOString() ?? null };
}

/**
 * Adds an address to the account's list. Idempotent: when the address (in any spelling of
 * case) is already there, that entry is kept unchanged and returned with `created: false`.
 * Throws validation_failed for an invalid address or reason.
 */
export async function suppress(
  db: Queryable,
  accountId: string,
  email: string,
  reason: SuppressionReason = 'manual',
  opts: { detail?: string | null; bounceReason?: string | null; now?: Date } = {},
): Promise<{ entry: SuppressionEntry; created: boolean }> {
  const address = requireAddress('email', email);
  requireReason('reason', reason);
  // Two rounds at most: the entry can vanish between our insert and read (a concurrent
  // re-subscribe), and then our insert wins on the second try.
  for (let attempt = 0; attempt < 2; attempt++) {
    const row = await insertSuppression(db, {
      id: newId('sup'),
      accountId,
      email: address.address,
      key: address.key,
      reason,
      detail: opts.detail ?? null,
      bounceReason: opts.bounceReason ?? null,
      now: opts.now ?? new Date(),
    });
    if (row) return { entry: toEntry(row), created: true };
    const existing = await selectSuppression(db, accountId, address.key);
    if (existing) return { entry: toEntry(existing), created: false };
  }
  throw new AppError('conflict', `${address.address} was added and removed concurrently; retry`);
}

/**
 * The bulk add: every entry is validated first and, if any is invalid, nothing is written
 * (validation_failed naming each bad one as `entries.<index>.email`). Then one statement
 * inserts the new addresses. `existing` counts entries already on the list, including repeats
 * of an address within the batch.
 */
export async function suppressMany(
  db: Queryable,
  accountId: string,
  entries: readonly { email: string; reason?: SuppressionReason }[],
  opts: { defaultReason?: SuppressionReason; now?: Date } = {},
): Promise<{ created: number; existing: number }> {
  if (entries.length > MAX_BULK_SUPPRESSIONS) throw invalid('entries', `must hold at most ${MAX_BULK_SUPPRESSIONS} entries`);
  const defaultReason = requireReason('reason', opts.defaultReason ?? 'manual');
  const errors: FieldError[] = [];
  const badEntries = new Set<number>();
  const rows: { id: string; email: string; key: string; reason: string }[] = [];
  for (let i = 0; i < entries.length; i++) {
    // The RFC 5322 parser costs ~0.1 ms an address: give other requests the event loop
    // between slices instead of holding it for a whole 10,000-entry batch.
    if (i > 0 && i % PARSE_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    const r = parseEmailAddress(entries[i].email);
    const reason = entries[i].reason ?? defaultReason;
    if (!r.ok) errors.push({ field: `entries.${i}.email`, message: r.message });
    if (!isReason(reason)) errors.push({ field: `entries.${i}.reason`, message: `must be one of ${SUPPRESSION_REASONS.join(', ')}` });
    if (!r.ok || !isReason(reason)) badEntries.add(i);
    else if (badEntries.size === 0) rows.push({ id: newId('sup'), email: r.value.address, key: r.value.key, reason });
  }
  if (errors.length > 0) {
    const shown = errors.slice(0, 100);
    const more = errors.length > shown.length ? ` (first ${shown.length} of ${errors.length} errors listed)` : '';
    const n = badEntries.size;
    throw new AppError('validation_failed', `${n} invalid entr${n === 1 ? 'y' : 'ies'}, nothing was added${more}`, { errors: shown });
  }
  rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const created = await insertSuppressions(db, accountId, rows, opts.now ?? new Date());
  return { created, existing: entries.length - created };
}

/**
 * The re-subscribe: removes the address from the list and returns the removed entry, or null
 * when it was not suppressed. Only the list: what else re-subscribing changes (subscribers
 * back to `active`) is composed around this call in address-status.ts, inside one transaction.
 */
export async function unsuppress(db: Queryable, accountId: string, email: string): Promise<SuppressionEntry | null> {
  const address = requireAddress('email', email);
  const row = await deleteSuppression(db, accountId, address.key);
  return row ? toEntry(row) : null;
}

/** `reason`: only entries with it; `q`: case-insensitive substring of the address. */
export async function listSuppressions(
  db: Queryable,
  accountId: string,
  filter: { reason?: string; q?: string },
  page: Page,
): Promise<{ data: SuppressionEntry[]; nextCursor: string | null }> {
  const reason = filter.reason === undefined ? null : requireReason('reason', filter.reason);
  const q = filter.q?.trim() ? filter.q.trim() : null;
  const rows = await selectSuppressionPage(db, accountId, { reason, q }, page);
  const result = finishPage(rows, page, (r) => r.id);
  return { data: result.data.map(toEntry), nextCursor: result.nextCursor };
}
