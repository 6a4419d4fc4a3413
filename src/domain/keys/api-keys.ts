import { hash as digestOf, randomBytes } from 'node:crypto';
import { finishPage, keyset, type Page } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import {
  findLiveKey, getApiKey, insertApiKey, listApiKeys, pageApiKeys, revokeApiKey, touchApiKey, type ApiKeyRow,
} from '../../db/queries/api-keys.js';
import { AppError, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { requireAccount } from '../accounts.js';
import type { VerifiedKeyCache } from './key-cache.js';

export type KeyMode = 'live' | 'test';

export interface ApiKey {
  id: string;
  accountId: string;
  mode: KeyMode;
  name: string | null;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** What a request knows once its key is accepted. */
export interface AuthContext {
  accountId: string;
  accountName: string;
  monthlyQuota: number | null;
  /** The API key used, or null when a signed-in dashboard user (session cookie) made the request. */
  keyId: string | null;
  /** Session requests act as live. */
  mode: KeyMode;
  prefix: string | null;
  via: 'key' | 'session';
  /** Requests counted in the current rate-limit window, this one included. */
  windowCount: number;
}

export const RATE_WINDOW_MS = 60_000;

/** Counts a request in its rate-limit window and resolves to its rank there (domain/request-writes.ts). */
export interface RequestCounter {
  count(bucket: string, windowStart: Date): Promise<number>;
}

const KEY_PATTERN = /^sk_(live|test)_[A-Za-z0-9_-]{43,}$/;

/** The key's SHA-256, as stored (one-shot: no Hash object per request). */
export function hashKey(key: string): Buffer {
  return digestOf('sha256', key, 'buffer');
}

function toApiKey(r: ApiKeyRow): ApiKey {
  return {
    id: r.id,
    accountId: r.account_id,
    mode: r.mode,
    name: r.name,
    prefix: r.prefix,
    createdAt: r.created_at.toISOString(),
    lastUsedAt: r.last_used_at?.toISOString() ?? null,
    revokedAt: r.revoked_at?.toISOString() ?? null,
  };
}

/** Creates a key; the full secret is returned here and never again (only its hash is kept). */
export async function createApiKey(
  db: Queryable,
  input: { accountId: string; mode: KeyMode; name?: string | null },
): Promise<ApiKey & { key: string }> {
  await requireAccount(db, input.accountId);
  const key = `sk_${input.mode}_${randomBytes(32).toString('base64url')}`;
  const prefix = key.slice(0, 'sk_live_'.length + 6);
  const row = await insertApiKey(db, {
    id: newId('key'),
    accountId: input.accountId,
    mode: input.mode,
    name: input.name ?? null,
    prefix,
    hash: hashKey(key),
  });
  return { ...toApiKey(row), key };
}

export async function keysOfAccount(db: Queryable, accountId: string): Promise<ApiKey[]> {
  await requireAccount(db, accountId);
  return (await listApiKeys(db, accountId)).map(toApiKey);
}

/** Revokes a key; with `accountId`, a key of another account is not found. */
export async function revokeKey(db: Queryable, keyId: string, at: Date, accountId: string | null = null): Promise<ApiKey> {
  const row = await revokeApiKey(db, keyId, at, accountId);
  if (!row) throw notFound(`key ${keyId}`);
  return toApiKey(row);
}

export function rateWindowStart(now: Date): Date {
  return new Date(Math.floor(now.getTime() / RATE_WINDOW_MS) * RATE_WINDOW_MS);
}

/** The bucket of an account's rate limit: all its keys of one mode together. */
export function rateBucket(accountId: string, mode: KeyMode): string {
  return `${accountId}:${mode}`;
}

/**
 * Resolves a presented key to its account and counts the request against the rate limit.
 * A malformed key is rejected before any query; an unknown or revoked key is indistinguishable
 * from a wrong one (lookup is by hash, so no timing signal about which keys exist). The key
 * is looked up through the process's cache of verified keys (key-cache.ts) and the request
 * counted through the process's group-committed writes (domain/request-writes.ts).
 */
export async function authenticate(
  db: Queryable, presented: string | undefined, now: Date, via: { cache: VerifiedKeyCache; counter: RequestCounter },
): Promise<AuthContext> {
  const verified = await verifyApiKey(db, presented, now, via.cache);
  const windowCount = await via.counter.count(rateBucket(verified.accountId, verified.mode), rateWindowStart(now));
  return { ...verified, windowCount };
}

/**
 * The account and mode of a presented key, without counting a request: for SMTP submission's
 * AUTH, where each message is the request that counts (docs/submission.md).
 */
export async function verifyApiKey(
  db: Queryable, presented: string | undefined, now: Date, cache: VerifiedKeyCache,
): Promise<Omit<AuthContext, 'windowCount'>> {
  if (!presented) throw new AppError('unauthorized', 'Missing API key: send Authorization: Bearer <key> or X-Api-Key: <key>');
  if (!KEY_PATTERN.test(presented)) throw new AppError('unauthorized', 'Malformed API key');
  const hash = hashKey(presented);
  const found = cache.lookup(hash, () => findLiveKey(db, hash));
  const row = found instanceof Promise ? await found : found;
  if (!row) throw new AppError('unauthorized', 'Unknown or revoked API key');
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() > 60_000) {
    row.last_used_at = now; // the cached row too, so the next requests do not touch it again
    touchApiKey(db, row.key_id, now).catch(() => {}); // best effort; never fails a request
  }
  return {
    accountId: row.account_id,
    accountName: row.account_name,
    monthlyQuota: row.monthly_quota,
    keyId: row.key_id,
    mode: row.mode,
    prefix: row.prefix,
    via: 'key',
  };
}

export async function pageKeysOfAccount(db: Queryable, accountId: string, page: Page): Promise<{ data: ApiKey[]; nextCursor: string | null }> {
  const p = finishPage(await pageApiKeys(db, accountId, keyset(page, 'id', 2), page.limit), page, (r) => r.id);
  return { data: p.data.map(toApiKey), nextCursor: p.nextCursor };
}

export async function requireApiKey(db: Queryable, accountId: string, id: string): Promise<ApiKey> {
  const row = await getApiKey(db, accountId, id);
  if (!row) throw notFound(`key ${id}`);
  return toApiKey(row);
}
