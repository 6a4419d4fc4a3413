import { finishPage, ListQuery, listResponse, pageOf } from '../../pagination.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SEGMENT_FIELDS, SEGMENT_OPS } from '../../../domain/audience/segment-sql.js';
import { countDefinition, createSegment, deleteSegment, getSegment, listSegments, segmentSubscribers, updateSegment } from '../../../domain/audience/segments.js';
import { accountWrite, withSandbox } from '../../account-write.js';
import { IdParam, invalidResponse, notFoundResponse, SandboxFlag } from './common-schemas.js';
import { subscriberExample, SubscriberSchema } from './subscriber-schemas.js';

// The condition tree is recursive; its exact rules (fields, ops, value types) are checked by
// domain/audience/segment-sql.ts, which names the offending path in a 422.
const Conditions = Type.Array(Type.Unknown(), {
  maxItems: 200,
  description: `Conditions {field, op, value} or nested groups {match, conditions}. Fields: ${SEGMENT_FIELDS.join(', ')}. `
    + `Ops: ${SEGMENT_OPS.join(', ')}. See docs/audience.md for which op applies to which field.`,
});
const Match = Type.Union([Type.Literal('all'), Type.Literal('any')], { description: 'all = AND, any = OR' });

const SegmentSchema = Type.Object({
  id: Type.String({ description: 'seg_…' }),
  name: Type.String(),
  match: Match,
  conditions: Conditions,
  subscriberCount: Type.Integer({ description: 'Subscribers matching now (live), whatever their status' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  sandbox: SandboxFlag,
});

const exampleConditions = [
  { field: 'list', op: 'eq', value: 'lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01' },
  { field: 'status', op: 'eq', value: 'active' },
  { match: 'any', conditions: [{ field: 'attributes.plan', op: 'in', value: ['pro', 'team'] }, { field: 'opened', op: 'within', value: 30 }] },
];
const example = {
  id: 'seg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20',
  name: 'Engaged paying newsletter readers',
  match: 'all',
  conditions: exampleConditions,
  subscriberCount: 412,
  createdAt: '2026-11-20T10:15:30.123Z',
  updatedAt: '2026-11-20T10:15:30.123Z',
};

const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  match: Type.Optional(Match),
  conditions: Conditions,
}, { additionalProperties: false, examples: [{ name: example.name, match: 'all', conditions: exampleConditions }] });

const PatchBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  match: Type.Optional(Match),
  conditions: Type.Optional(Conditions),
}, { additionalProperties: false, examples: [{ name: 'Engaged readers' }, { match: 'any', conditions: [{ field: 'opened', op: 'within', value: 30 }, { field: 'clicked', op: 'within', value: 30 }] }] });

const NotFound = notFoundResponse('segment', example.id);
const Invalid = invalidResponse('validation_failed: an unknown field or op, an op that does not apply to the field, or a value of the wrong type, named by its path',
  'conditions[2].conditions[0].op', 'unknown op "like" (known: eq, neq, contains, starts_with, gt, gte, lt, lte, in, exists, not_exists, within, not_within)');

const tags = ['segments'];

export async function segmentRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;

  app.get('/api/v1/segments', {
    schema: {
      operationId: 'listSegments',
      summary: 'List segments',
      description: 'Each with its live subscriberCount.',
      tags,
      querystring: ListQuery,
      response: { 200: { ...listResponse(SegmentSchema), examples: [{ data: [example], nextCursor: null }] } },
    },
  }, async (request) => {
    const page = pageOf(request.query);
    return finishPage(await listSegments(pool, request.auth.accountId, page, clock.now()), page, (s) => s.id);
  });

  app.post('/api/v1/segments', {
    schema: {
      operationId: 'createSegment',
      summary: 'Create a segment',
      description: 'An unknown field or op, or a value of the wrong type, is a 422 naming the condition path.',
      tags,
      body: CreateBody,
      response: { 201: { ...SegmentSchema, examples: [example] }, 422: Invalid },
    },
  }, async (request, reply) => {
    const r = await accountWrite(app, request, (db) => createSegment(db, request.auth.accountId, request.body, clock.now()));
    return reply.code(201).send(withSandbox(r));
  });

  app.post('/api/v1/segments/count', {
    schema: {
      operationId: 'countSegment',
      summary: 'Count the subscribers matching unsaved conditions',
      description: 'Validates `match` and `conditions` exactly as creating a segment does, stores nothing, and answers how many subscribers match now (whatever their status). The dashboard\'s rule builder calls it as you edit.',
      tags,
      body: Type.Object({ match: Type.Optional(Match), conditions: Conditions }, {
        additionalProperties: false,
        examples: [{ match: 'all', conditions: [{ field: 'attributes.plan', op: 'eq', value: 'pro' }] }],
      }),
      response: {
        200: { ...Type.Object({ subscriberCount: Type.Integer({ description: 'Subscribers matching now' }) }), examples: [{ subscriberCount: 412 }] },
        422: Invalid,
      },
    },
  }, async (request) => ({ subscriberCount: await countDefinition(pool, request.auth.accountId, request.body, clock.now()) }));

  app.get('/api/v1/segments/:id', {
    schema: {
      operationId: 'getSegment',
      summary: 'Get a segment with its live count',
      description: 'Membership is computed when asked, never stored: the count is always current.',
      tags,
      params: IdParam,
      response: { 200: { ...SegmentSchema, examples: [example] }, 404: NotFound },
    },
  }, async (request) => getSegment(pool, request.auth.accountId, request.params.id, clock.now()));

  app.patch('/api/v1/segments/:id', {
    schema: {
      operationId: 'updateSegment',
      summary: 'Update a segment',
      description: 'Only the fields given change; a new definition is validated like on create.',
      tags,
      params: IdParam,
      body: PatchBody,
      response: { 200: { ...SegmentSchema, examples: [example] }, 404: NotFound, 422: Invalid },
    },
  }, async (request) => {
    const r = await accountWrite(app, request, (db) => updateSegment(db, request.auth.accountId, request.params.id, request.body, clock.now()));
    return withSandbox(r);
  });

  app.delete('/api/v1/segments/:id', {
    schema: {
      operationId: 'deleteSegment',
      summary: 'Delete a segment',
      description: 'Removes the saved definition; subscribers are not touched.',
      tags,
      params: IdParam,
      response: { 204: Type.Null({ description: 'Deleted' }), 404: NotFound },
    },
  }, async (request, reply) => {
    await accountWrite(app, request, (db) => deleteSegment(db, request.auth.accountId, request.params.id));
    return reply.code(204).send(null);
  });

  app.get('/api/v1/segments/:id/subscribers', {
    schema: {
      operationId: 'listSegmentSubscribers',
      summary: "List a segment's subscribers",
      description: 'Matching subscribers now, paginated like GET /api/v1/subscribers.',
      tags,
      params: IdParam,
      querystring: ListQuery,
      response: { 200: { ...listResponse(SubscriberSchema), examples: [{ data: [subscriberExample], nextCursor: null }] }, 404: NotFound },
    },
  }, async (request) => {
    const page = pageOf(request.query);
    return finishPage(await segmentSubscribers(pool, request.auth.accountId, request.params.id, page, clock.now()), page, (s) => s.id);
  });
}
