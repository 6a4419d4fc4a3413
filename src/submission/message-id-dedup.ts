import { createHash } from 'node:crypto';
import {
  claimIdempotencyKey, completeIdempotencyKey, getIdempotencyRecord, releaseIdempotencyKey,
} from '../db/queries/idempotency.js';
import type { Queryable } from '../db/pool.js';
import type { KeyMode } from '../domain/keys/api-keys.js';

const TTL_MS = 24 * 60 * 60 * 1000;

/** What a Message-ID seen before stands for. */
export type Seen =
  | { state: 'new'; release: () => Promise<void>; complete: (acceptedId: string) => Promise<void> }
  | { state: 'accepted'; acceptedId: string }
  | { state: 'in_flight' };

/**
 * Idempotency of SMTP submission by Message-ID (docs/submission.md): a client that lost our
 * 250 (a timeout, a dropped connection) sends the same message again, with the same
 * Message-ID; within 24 h it is answered as accepted and not sent twice. It shares the API's
 * Idempotency-Key store (per account, same expiry and purge), under keys of their own
 * (`smtp:<mode>:<Message-ID>`) that an API client cannot collide with by accident, and a test
 * key's and a live key's sends apart.
 */
export async function claimMessageId(db: Queryable, r: { accountId: string; mode: KeyMode; messageId: string; now: Date }): Promise<Seen> {
  const key = `smtp:${r.mode}:${r.messageId}`;
  const hash = createHash('sha256').update(key).digest();
  const claimed = await claimIdempotencyKey(db, { accountId: r.accountId, key, hash, now: r.now, expiresAt: new Date(r.now.getTime() + TTL_MS) });
  if (claimed) {
    return {
      state: 'new',
      release: () => releaseIdempotencyKey(db, r.accountId, key),
      complete: (acceptedId) => completeIdempotencyKey(db, { accountId: r.accountId, key, status: 250, body: acceptedId, contentType: null }),
    };
  }
  const record = await getIdempotencyRecord(db, r.accountId, key);
  if (record?.status_code === 250 && record.response_body) return { state: 'accepted', acceptedId: record.response_body };
  return { state: 'in_flight' };
}
