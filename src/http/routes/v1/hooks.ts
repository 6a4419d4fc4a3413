import { ListQuery, listResponse, pageOf } from '../../pagination.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EVENT_TYPES, type EventType } from '../../../domain/events.js';
import {
  createHook, deleteHook, enableHook, EVENT_SHORT_NAMES, getHook, listHookDeliveries, listHooks, rotateHookSecret, sendTestDelivery,
} from '../../../domain/webhooks/hooks.js';
import { problemResponse } from '../../problem.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const EventTypeList = Type.Array(Type.Unsafe<EventType>({ type: 'string', enum: [...EVENT_TYPES] }), { description: 'Event types delivered to this hook' });

const hookFields = {
  id: Type.String({ description: 'hook_… identifier' }),
  url: Type.String({ description: 'Where batches are POSTed' }),
  events: EventTypeList,
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], { description: '`disabled` after a 410 Gone or when retries are exhausted; a disabled hook receives nothing' }),
  disabledReason: Nullable(Type.String({ description: 'Why the hook was disabled' })),
  createdAt: Timestamp('ISO 8601 UTC with milliseconds'),
};
const Hook = Type.Object(hookFields);
const SECRET = Type.String({ description: 'Signing secret (`whsec_…`): HMAC-SHA256 key for X-SVC-Signature. Shown only here and on rotation' });
const CreatedHook = Type.Object({ id: hookFields.id, url: hookFields.url, events: EventTypeList, secret: SECRET, createdAt: hookFields.createdAt });

const ID = 'hook_019a6f0c3b2e7d1a9c4b5e6f7a8b9c11';
const SECRET_EXAMPLE = 'whsec_Q2hhbmdlIG1lOiB0aGlzIGlzIGFuIGV4YW1wbGUgc2VjcmV0IQ';
const HOOK_EXAMPLE = {
  id: ID, url: 'https://example.com/webhooks/postline', events: ['hard_bounce', 'soft_bounce', 'spam'],
  status: 'active', disabledReason: null, createdAt: '2026-11-20T10:15:30.123Z',
};
const DELIVERY_EXAMPLE = {
  id: 'dlv_019a6f0d2c4e7a1b8c9d0e1f2a3b4c5d', attemptedAt: '2026-11-20T10:16:02.481Z', attempt: 2, outcome: 'delivered', statusCode: 200,
  durationMs: 87, eventCount: 500, firstEventId: 'evt_019a6f0d1a2b7c3d8e9f0a1b2c3d4e5f', lastEventId: 'evt_019a6f0d1b9c7d0e8f1a2b3c4d5e6f70', error: null, nextAttemptAt: null,
};

const CreateBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL, at most 2048 characters, no credentials; its host must resolve to public addresses only' }),
    events: Type.Array(Type.String({ maxLength: 40 }), {
      maxItems: 50,
      description: `Event types (${EVENT_TYPES.join(', ')}) and short names (${Object.entries(EVENT_SHORT_NAMES).map(([k, v]) => `${k} = ${v.join(' + ')}`).join(', ')}); stored as types`,
    }),
  },
  { additionalProperties: false, examples: [{ url: 'https://example.com/webhooks/postline', events: ['bounce', 'complaint'] }] },
);
const IdParams = Type.Object({ id: Type.String({ description: 'Hook id (hook_…)' }) });
const Delivery = Type.Object({
  id: Type.String({ description: 'dlv_… identifier of the attempt' }),
  attemptedAt: Timestamp('When the request was sent'),
  attempt: Type.Integer({ description: 'Attempt number of this batch, from 1' }),
  outcome: Type.Unsafe<'delivered' | 'retrying' | 'failed' | 'disabled' | 'test'>({
    type: 'string',
    enum: ['delivered', 'retrying', 'failed', 'disabled', 'test'],
    description: '`delivered` (2xx); `retrying` (5xx, 408, 429, timeout, connection error: sent again at nextAttemptAt); `failed` (other 4xx or 3xx: batch dropped); `disabled` (410 Gone or retries exhausted); `test` (POST …/test)',
  }),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status; null when no response arrived' }),
  durationMs: Type.Integer({ description: 'Milliseconds from connect to the end of the response' }),
  eventCount: Type.Integer({ description: 'Events in the batch' }),
  firstEventId: Nullable(Type.String()),
  lastEventId: Nullable(Type.String()),
  error: Nullable(Type.String({ description: 'What went wrong, when something did' })),
  nextAttemptAt: Type.Union([Timestamp('When the batch will be retried'), Type.Null()]),
});
const TestResult = Type.Object({
  delivered: Type.Boolean({ description: 'true when the receiver answered 2xx' }),
  statusCode: Type.Union([Type.Integer(), Type.Null()]),
  durationMs: Type.Integer(),
  error: Nullable(Type.String()),
  event: Type.Object({
    id: Type.String(), type: Type.String(), email: Type.String(), messageId: Nullable(Type.String()), url: Type.Optional(Type.String()),
    occurredAt: Type.String(), data: Type.Record(Type.String(), Type.Unknown()),
  }, { description: 'The made-up event that was sent (data.test = true)' }),
});

const NotFound = problemResponse('No hook with this id in this account (ids of other accounts are not found either)', 'not_found', `hook ${ID} not found`);
const Unprocessable = problemResponse(
  'validation_failed: an unknown event name, no events, or a URL that is not http(s), carries credentials, or points at a private address',
  'validation_failed',
  'url: is refused: 10.0.0.5 is not a public address: private (10.0.0.0/8) (for development, POSTLINE_WEBHOOK_ALLOW_PRIVATE=true allows private and loopback targets)',
  [{ field: 'url', message: 'is refused: 10.0.0.5 is not a public address: private (10.0.0.0/8) (for development, POSTLINE_WEBHOOK_ALLOW_PRIVATE=true allows private and loopback targets)' }],
);

/** Webhook subscriptions, their attempt log, secret rotation and test sends (docs/webhooks.md). */
export async function hookRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock, config } = app.deps;

  app.post('/api/v1/hooks', {
    schema: {
      operationId: 'createHook',
      summary: 'Create a webhook',
      description: 'Subscribes a URL to event types. Events recorded from now on are POSTed in batches of at most 500, in order, signed with `X-SVC-Signature: sha256=<hex HMAC-SHA256 of the raw body>` keyed with `secret`, which is returned only here (see docs/webhooks.md).',
      tags: ['webhooks'],
      body: CreateBody,
      response: { 201: { ...CreatedHook, examples: [{ id: ID, url: HOOK_EXAMPLE.url, events: HOOK_EXAMPLE.events, secret: SECRET_EXAMPLE, createdAt: HOOK_EXAMPLE.createdAt }] }, 422: Unprocessable },
    },
  }, async (request, reply) => {
    const hook = await createHook(pool, config, request.auth.accountId, request.body, clock.now());
    return reply.code(201).send({ id: hook.id, url: hook.url, events: hook.events, secret: hook.secret, createdAt: hook.createdAt });
  });

  app.get('/api/v1/hooks', {
    schema: {
      operationId: 'listHooks',
      summary: 'List webhooks',
      description: 'The account\'s hooks without secrets, newest first by default; paginate with `limit`, `order` and `cursor`.',
      tags: ['webhooks'],
      querystring: ListQuery,
      response: { 200: { ...listResponse(Hook), examples: [{ data: [HOOK_EXAMPLE], nextCursor: null }] } },
    },
  }, async (request) => listHooks(pool, request.auth.accountId, pageOf(request.query)));

  app.get('/api/v1/hooks/:id', {
    schema: {
      operationId: 'getHook',
      summary: 'Get a webhook',
      description: 'The hook and its state (the secret is never shown again).',
      tags: ['webhooks'],
      params: IdParams,
      response: { 200: { ...Hook, examples: [HOOK_EXAMPLE, { ...HOOK_EXAMPLE, status: 'disabled', disabledReason: 'the receiver answered 410 Gone' }] }, 404: NotFound },
    },
  }, async (request) => getHook(pool, request.auth.accountId, request.params.id));

  app.delete('/api/v1/hooks/:id', {
    schema: {
      operationId: 'deleteHook',
      summary: 'Delete a webhook',
      description: 'Stops deliveries at once; undelivered events and the attempt log are discarded.',
      tags: ['webhooks'],
      params: IdParams,
      response: { 204: Type.Null({ description: 'Deleted' }), 404: NotFound },
    },
  }, async (request, reply) => {
    await deleteHook(pool, request.auth.accountId, request.params.id);
    return reply.code(204).send(null);
  });

  app.get('/api/v1/hooks/:id/deliveries', {
    schema: {
      operationId: 'listHookDeliveries',
      summary: 'List delivery attempts',
      description: 'Every attempt to deliver a batch (and every test send), newest first by default: time, outcome, HTTP status, duration, number of events and the error, if any.',
      tags: ['webhooks'],
      params: IdParams,
      querystring: ListQuery,
      response: {
        200: {
          ...listResponse(Delivery),
          examples: [{
            data: [DELIVERY_EXAMPLE, {
              ...DELIVERY_EXAMPLE, id: 'dlv_019a6f0d0b1c7d2e8f3a4b5c6d7e8f90', attemptedAt: '2026-11-20T10:15:52.102Z', attempt: 1, outcome: 'retrying',
              statusCode: 503, durationMs: 12, error: 'HTTP 503: upstream unavailable', nextAttemptAt: '2026-11-20T10:16:02.102Z',
            }],
            nextCursor: null,
          }],
        },
        404: NotFound,
      },
    },
  }, async (request) => listHookDeliveries(pool, request.auth.accountId, request.params.id, pageOf(request.query)));

  app.post('/api/v1/hooks/:id/enable', {
    schema: {
      operationId: 'enableHook',
      summary: 'Re-enable a disabled webhook',
      description: 'A hook disabled after a 410 Gone or exhausted retries becomes `active` again: its failure count is reset and the batch that was pending when it was disabled is sent first, at once. Events recorded while it was disabled are not delivered (they were never queued for it). Enabling an active hook changes nothing.',
      tags: ['webhooks'],
      params: IdParams,
      response: { 200: { ...Hook, description: 'The hook, now active', examples: [HOOK_EXAMPLE] }, 404: NotFound },
    },
  }, async (request) => enableHook(pool, request.auth.accountId, request.params.id, clock.now()));

  app.post('/api/v1/hooks/:id/rotate-secret', {
    schema: {
      operationId: 'rotateHookSecret',
      summary: 'Rotate the signing secret',
      description: 'Replaces the secret; the next batch is signed with the new one. The new secret is shown only in this response.',
      tags: ['webhooks'],
      params: IdParams,
      response: { 200: { ...Type.Object({ secret: SECRET }), examples: [{ secret: SECRET_EXAMPLE }] }, 404: NotFound },
    },
  }, async (request) => rotateHookSecret(pool, config, request.auth.accountId, request.params.id));

  app.post('/api/v1/hooks/:id/test', {
    schema: {
      operationId: 'testHook',
      summary: 'Send a test event',
      description: 'Sends one signed, made-up event (`data.test: true`) of the hook\'s first event type now, outside the queue, and returns what the receiver answered. Works on disabled hooks; never changes the hook\'s state.',
      tags: ['webhooks'],
      params: IdParams,
      response: {
        200: {
          ...TestResult,
          examples: [{
            delivered: true, statusCode: 200, durationMs: 41, error: null,
            event: { id: 'evt_019a6f0e5d6c7b8a9f0e1d2c3b4a5f6e', type: 'hard_bounce', email: 'recipient@example.com', messageId: 'msg_019a6f0e5d6c7b8a9f0e1d2c3b4a5f6f', occurredAt: '2026-11-20T10:20:00.000Z', data: { test: true } },
          }],
        },
        404: NotFound,
      },
    },
  }, async (request) => sendTestDelivery(pool, config, request.auth.accountId, request.params.id, clock.now()));
}
