import { createHash, randomBytes } from 'node:crypto';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, type IdempotencyLease } from '../db/queries/idempotency.js';
import type { Queryable } from '../db/pool.js';
import type { KeyMode } from '../domain/keys/api-keys.js';

const TTL_MS = 24 * 60 * 60 * 1000;

/** What a Message-ID seen before stands for. */
export type Seen =
  | {
      state: 'new';
      /** Goes with the send, so a retry that takes over an expired claim finds the message it stored. */
      claim: { ref: string; takenOver: boolean };
      release: () => Promise<void>;
      complete: (acceptedId: string) => Promise<void>;
    }
  | { state: 'accepted'; acceptedId: string }
  | { state: 'in_flight' };

/**
 * Idempotency of SMTP submission by Message-ID (docs/submission.md): a client that lost our
 * 250 (a timeout, a dropped connection) sends the same message again, with the same
 * Message-ID; within 24 h it is answered as accepted and not sent twice. It shares the API's
 * Idempotency-Key store (per account, same expiry, purge and lease; decision 0029), under
 * keys of their own (`smtp:<mode>:<Message-ID>`) that an API client cannot collide with by
 * accident, and a test key's and a live key's sends apart. A claim is leased for
 * `leaseMs` without renewal (accepting one message takes milliseconds): a claim left by a
 * process that died is taken over by the client's next attempt once the lease ends, and the
 * send pipeline answers with the message stored under it, if any.
 */
export async function claimMessageId(
  db: Queryable, r: { accountId: string; mode: KeyMode; messageId: string; now: Date; leaseMs: number },
): Promise<Seen> {
  const key = `smtp:${r.mode}:${r.messageId}`;
  const lease: IdempotencyLease = { accountId: r.accountId, key, token: randomBytes(16).toString('hex'), lockedUntil: new Date(r.now.getTime() + r.leaseMs) };
  const claim = await claimIdempotencyKey(db, {
    lease, ref: randomBytes(16).toString('hex'), hash: createHash('sha256').update(key).digest(), now: r.now, expiresAt: new Date(r.now.getTime() + TTL_MS),
  });
  if (claim.owned) {
    return {
      state: 'new',
      claim: { ref: claim.ref, takenOver: claim.takenOver },
      release: () => releaseIdempotencyKey(db, lease),
      complete: (acceptedId) => completeIdempotencyKey(db, lease, { status: 250, body: acceptedId, contentType: null }),
    };
  }
  const record = claim.record;
  if (record?.status_code === 250 && record.response_body) return { state: 'accepted', acceptedId: record.response_body };
  return { state: 'in_flight' };
}
