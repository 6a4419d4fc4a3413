import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { PoolClient } from '../../../db/pool.js';
import { withTransaction } from '../../../db/pool.js';
import { inSandbox } from '../../../db/sandbox.js';
import { problemResponse } from '../../problem.js';

/**
 * Shared by the audience routes (lists, subscribers, segments, imports).
 *
 * Audience writes run in one transaction. With a test key, that transaction runs inside the
 * request's sandbox (plugins/sandbox.ts, db/sandbox.ts), which rolls everything back: same
 * validation, same 404s, same upsert outcome as a live key, and nothing stored or queued.
 * `sandbox` tells the route to say so in its answer.
 */
export async function audienceWrite<T>(app: FastifyInstance, request: FastifyRequest, fn: (db: PoolClient) => Promise<T>): Promise<{ value: T; sandbox: boolean }> {
  const sandbox = request.auth.mode === 'test';
  // A test-key write outside the sandbox would be real: refuse rather than write.
  if (sandbox && !inSandbox()) throw new Error('test-key audience write outside the sandbox');
  return { value: await withTransaction(app.deps.pool, fn), sandbox };
}

/** `{...value, sandbox: true}` for test keys, the value itself for live keys. */
export function withSandbox<T extends object>(r: { value: T; sandbox: boolean }): T & { sandbox?: true } {
  return r.sandbox ? { ...r.value, sandbox: true } : r.value;
}

export const SandboxFlag = Type.Optional(Type.Boolean({ description: 'Present (true) when a test key made the request: nothing was stored' }));

export const SubscriberStatusSchema = Type.Union(
  [Type.Literal('active'), Type.Literal('unconfirmed'), Type.Literal('unsubscribed'), Type.Literal('bounced'), Type.Literal('complained')],
  { description: 'active; unconfirmed (double opt-in pending); unsubscribed, bounced, complained (also imposed by a suppression)' },
);

export const Attributes = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form JSON object of custom fields (merge fields, segment conditions)' });

export const SubscriberSchema = Type.Object({
  id: Type.String({ description: 'sub_…; time-ordered, never reused' }),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  status: SubscriberStatusSchema,
  attributes: Attributes,
  lists: Type.Array(Type.String(), { description: 'Ids of the lists the subscriber is in' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  sandbox: SandboxFlag,
});

export const subscriberExample = {
  id: 'sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  status: 'active',
  attributes: { plan: 'pro', signupSource: 'webinar' },
  lists: ['lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01'],
  createdAt: '2026-11-20T10:15:30.123Z',
  updatedAt: '2026-11-20T10:15:30.123Z',
};

export const IdParam = Type.Object({ id: Type.String({ maxLength: 200 }) });

export function notFoundResponse(what: string, id: string) {
  return problemResponse(`No ${what} with this id in this account (ids of other accounts are not found either)`, 'not_found', `${what} ${id} not found`);
}

export function invalidResponse(description: string, field: string, message: string) {
  return problemResponse(description, 'validation_failed', `${field}: ${message}`, [{ field, message }]);
}
