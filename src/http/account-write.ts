import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Pool, PoolClient } from '../db/pool.js';
import { withTransaction } from '../db/pool.js';
import { inSandbox } from '../db/sandbox.js';

/**
 * A write of an account's resources (lists, subscribers, campaigns, automations, keys, users…)
 * runs in one transaction. With a test key, that transaction runs inside the
 * request's sandbox (plugins/sandbox.ts, db/sandbox.ts), which rolls everything back: same
 * validation, same 404s, same upsert outcome as a live key, and nothing stored or queued.
 * `sandbox` tells the route to say so in its answer.
 */
export async function accountWrite<T>(app: FastifyInstance, request: FastifyRequest, fn: (db: PoolClient) => Promise<T>): Promise<{ value: T; sandbox: boolean }> {
  const sandbox = request.auth.mode === 'test';
  // A test-key write outside the sandbox would be real: refuse rather than write.
  if (sandbox && !inSandbox()) throw new Error('test-key write outside the sandbox');
  return { value: await withTransaction(app.deps.pool, fn), sandbox };
}

/** `{...value, sandbox: true}` for test keys, the value itself for live keys. */
export function withSandbox<T extends object>(r: { value: T; sandbox: boolean }): T & { sandbox?: true } {
  return r.sandbox ? { ...r.value, sandbox: true } : r.value;
}


/** One transaction around a domain call that writes (the request is the unit of work). */
export function inTransaction<T>(pool: Pool, fn: (db: PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, fn);
}
