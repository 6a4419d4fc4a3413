import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  claimIdempotencyKey, completeIdempotencyKey, getIdempotencyRecord, releaseIdempotencyKey,
} from '../../db/queries/idempotency.js';
import type { Pool, Queryable } from '../../db/pool.js';
import { outsideSandbox } from '../../db/sandbox.js';
import { AppError } from '../../errors.js';
import { decryptSecret, encryptSecret } from '../../mail/keyring.js';

const TTL_MS = 24 * 60 * 60 * 1000;
const PURPOSE = 'idempotent-response';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey?: string;
  }
}

function requestHash(request: FastifyRequest): Buffer {
  const body = typeof request.body === 'string' || Buffer.isBuffer(request.body) ? request.body : JSON.stringify(request.body ?? null);
  return createHash('sha256').update(`${request.method} ${request.url}\n`).update(body).digest();
}

/**
 * Idempotency-Key on authenticated POSTs (DESIGN.md §5). The first request claims the key
 * with an INSERT … ON CONFLICT DO NOTHING, so of two concurrent requests exactly one runs;
 * the other sees a record still in flight and gets 409. A finished response (any status
 * below 500) is stored and replayed for 24 h with Idempotent-Replayed: true.
 */
export const idempotencyPlugin = fp(async (app: FastifyInstance) => {
  // The record outlives the request, test keys' too (a replay must work in the sandbox), so it
  // is written outside the request's sandbox (db/sandbox.ts) even when onSend runs inside it.
  const records: Queryable = { query: ((...args: Parameters<Pool['query']>) => outsideSandbox(() => app.deps.pool.query(...args))) as Pool['query'] };
  app.addHook('preHandler', async (request, reply) => {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined || !request.auth) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!KEY_PATTERN.test(key)) {
      throw new AppError('validation_failed', 'Idempotency-Key must be 1 to 255 printable ASCII characters', {
        errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
      });
    }
    const hash = requestHash(request);
    const now = app.deps.clock.now();
    const accountId = request.auth.accountId;
    if (await claimIdempotencyKey(records, { accountId, key, hash, now, expiresAt: new Date(now.getTime() + TTL_MS) })) {
      request.idempotencyKey = key;
      return;
    }
    const record = await getIdempotencyRecord(records, accountId, key);
    if (!record) throw new AppError('idempotency_conflict', 'Idempotency-Key was released by a concurrent request; retry');
    if (!record.request_hash.equals(hash)) {
      throw new AppError('idempotency_conflict', 'Idempotency-Key was already used with a different request body');
    }
    if (record.status_code === null) {
      throw new AppError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress');
    }
    reply.code(record.status_code).header('Idempotent-Replayed', 'true');
    if (record.content_type) reply.type(record.content_type);
    return reply.send(record.response_body ? decryptSecret(record.response_body, app.deps.config.secret, PURPOSE) : '');
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const key = request.idempotencyKey;
    if (!key) return payload;
    request.idempotencyKey = undefined;
    const accountId = request.auth.accountId;
    if (reply.statusCode >= 500 || (typeof payload !== 'string' && !Buffer.isBuffer(payload) && payload !== null && payload !== undefined)) {
      await releaseIdempotencyKey(records, accountId, key);
      return payload;
    }
    // Stored encrypted: some first responses carry secrets shown once (webhook secrets).
    const body = encryptSecret(payload === null || payload === undefined ? '' : payload.toString(), app.deps.config.secret, PURPOSE);
    const contentType = (reply.getHeader('content-type') as string | undefined) ?? null;
    await completeIdempotencyKey(records, { accountId, key, status: reply.statusCode, body, contentType });
    return payload;
  });
});
