import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, renewIdempotencyLease, type IdempotencyLease,
} from '../../db/queries/idempotency.js';
import type { Pool, Queryable } from '../../db/pool.js';
import { outsideSandbox } from '../../db/sandbox.js';
import { AppError } from '../../errors.js';
import { decryptSecret, encryptSecret } from '../../mail/keyring.js';

const TTL_MS = 24 * 60 * 60 * 1000;
const PURPOSE = 'idempotent-response';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The claim a request holds on its Idempotency-Key while it runs. */
export interface IdempotencyClaim {
  key: string;
  /** Names the request across lease takeovers; a send stores it on its message (migration 028). */
  ref: string;
  /** The claim was taken over from an owner whose lease ran out: its send may have committed. */
  takenOver: boolean;
  lease: IdempotencyLease;
  heartbeat: NodeJS.Timeout;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: IdempotencyClaim;
  }
}

function requestHash(request: FastifyRequest): Buffer {
  const body = typeof request.body === 'string' || Buffer.isBuffer(request.body) ? request.body : JSON.stringify(request.body ?? null);
  return createHash('sha256').update(`${request.method} ${request.url}\n`).update(body).digest();
}

/**
 * Idempotency-Key on authenticated POSTs (docs/architecture.md#api-conventions, decision 0029). The first request claims the key
 * with an INSERT … ON CONFLICT DO NOTHING, so of two concurrent requests exactly one runs;
 * the other sees a record still in flight and gets 409 with Retry-After. A finished response
 * (any status below 500) is stored and replayed for 24 h with Idempotent-Replayed: true.
 *
 * The claim is a lease (docs/decisions/0029-idempotency-lease.md): renewed every third of
 * POSTLINE_IDEMPOTENCY_LEASE_SECONDS while the request runs, so a claim whose process died
 * is taken over by the next retry once the lease runs out, instead of blocking the key for
 * 24 h. A send's message carries the claim's ref, so the taker answers with the message the
 * dead owner committed rather than sending again (domain/sending/sending.ts).
 */
export const idempotencyPlugin = fp(async (app: FastifyInstance) => {
  // The record outlives the request, test keys' too (a replay must work in the sandbox), so it
  // is written outside the request's sandbox (db/sandbox.ts) even when onSend runs inside it.
  const records: Queryable = { query: ((...args: Parameters<Pool['query']>) => outsideSandbox(() => app.deps.pool.query(...args))) as Pool['query'] };
  const leaseMs = app.deps.config.idempotencyLeaseMs;
  const leaseFrom = (now: Date) => new Date(now.getTime() + leaseMs);

  // Renews on the wall clock's schedule; the lease's end is on the app's clock, as the claim's.
  const startHeartbeat = (lease: IdempotencyLease) => {
    const timer = setInterval(() => {
      lease.lockedUntil = leaseFrom(app.deps.clock.now());
      renewIdempotencyLease(records, lease).then((held) => { if (!held) clearInterval(timer); }, () => {});
    }, Math.max(100, Math.floor(leaseMs / 3)));
    timer.unref();
    return timer;
  };
  const finish = (request: FastifyRequest): IdempotencyClaim | undefined => {
    const claim = request.idempotency;
    request.idempotency = undefined;
    if (claim) clearInterval(claim.heartbeat);
    return claim;
  };

  const claimKey = async (request: FastifyRequest, reply: FastifyReply, header: string | string[]) => {
    const key = Array.isArray(header) ? header[0] : header;
    if (!KEY_PATTERN.test(key)) {
      throw new AppError('validation_failed', 'Idempotency-Key must be 1 to 255 printable ASCII characters', {
        errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
      });
    }
    const hash = requestHash(request);
    const now = app.deps.clock.now();
    const lease: IdempotencyLease = { accountId: request.auth.accountId, key, token: randomBytes(16).toString('hex'), lockedUntil: leaseFrom(now) };
    const claim = await claimIdempotencyKey(records, {
      lease, ref: randomBytes(16).toString('hex'), hash, now, expiresAt: new Date(now.getTime() + TTL_MS),
    });
    if (claim.owned) {
      request.idempotency = { key, ref: claim.ref, takenOver: claim.takenOver, lease, heartbeat: startHeartbeat(lease) };
      return;
    }
    const record = claim.record;
    if (!record) throw new AppError('idempotency_conflict', 'Idempotency-Key was released by a concurrent request; retry');
    if (!record.request_hash.equals(hash)) {
      throw new AppError('idempotency_conflict', 'Idempotency-Key was already used with a different request body');
    }
    if (record.status_code === null) {
      const left = record.locked_until ? record.locked_until.getTime() - now.getTime() : 0;
      throw new AppError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress', {
        retryAfter: Math.max(1, Math.ceil(left / 1000)),
      });
    }
    reply.code(record.status_code).header('Idempotent-Replayed', 'true');
    if (record.content_type) reply.type(record.content_type);
    return reply.send(record.response_body ? decryptSecret(record.response_body, app.deps.config.secret, PURPOSE) : '');
  };

  const storeAnswer = async (claim: IdempotencyClaim, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode >= 500 || (typeof payload !== 'string' && !Buffer.isBuffer(payload) && payload !== null && payload !== undefined)) {
      await releaseIdempotencyKey(records, claim.lease);
      return payload;
    }
    // Stored encrypted: some first responses carry secrets shown once (webhook secrets).
    const body = encryptSecret(payload === null || payload === undefined ? '' : payload.toString(), app.deps.config.secret, PURPOSE);
    const contentType = (reply.getHeader('content-type') as string | undefined) ?? null;
    await completeIdempotencyKey(records, claim.lease, { status: reply.statusCode, body, contentType });
    return payload;
  };

  // A request without the header (most) passes with `done`, no promise; one with it waits for its claim.
  app.addHook('preHandler', (request, reply, done) => {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined || !request.auth) return done();
    return claimKey(request, reply, header) as unknown as void;
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const claim = finish(request);
    if (!claim) return done(null, payload);
    return storeAnswer(claim, reply, payload) as unknown as void;
  });
  // A response that never reached onSend (the socket closed first) stops renewing: the lease
  // then runs out and a retry takes over.
  app.addHook('onResponse', (request, _reply, done) => {
    finish(request);
    done();
  });
});
