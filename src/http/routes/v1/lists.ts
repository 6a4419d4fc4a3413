import { finishPage, ListQuery, listResponse, pageOf } from '../../pagination.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createList, deleteList, getList, listLists, updateList } from '../../../domain/audience/lists.js';
import { accountWrite, withSandbox } from '../../account-write.js';
import { IdParam, invalidResponse, notFoundResponse, SandboxFlag } from './common-schemas.js';

const ListSchema = Type.Object({
  id: Type.String({ description: 'lst_…' }),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  doubleOptIn: Type.Boolean({ description: 'New members get a confirmation mail and stay unconfirmed until they follow its link' }),
  confirmationTemplateId: Type.Union([Type.String(), Type.Null()], { description: 'Template of the confirmation mail; null = built-in' }),
  subscriberCount: Type.Integer({ description: 'Members, whatever their status' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  sandbox: SandboxFlag,
});

const example = {
  id: 'lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01',
  name: 'Newsletter',
  description: 'Monthly product news',
  doubleOptIn: true,
  confirmationTemplateId: null,
  subscriberCount: 1280,
  createdAt: '2026-11-20T10:15:30.123Z',
  updatedAt: '2026-11-20T10:15:30.123Z',
};

const Fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Union([Type.Null(), Type.String({ maxLength: 2000 })]),
  doubleOptIn: Type.Boolean(),
  confirmationTemplateId: Type.Union([Type.Null(), Type.String({ maxLength: 200 })]),
};

const CreateBody = Type.Object({
  name: Fields.name,
  description: Type.Optional(Fields.description),
  doubleOptIn: Type.Optional(Fields.doubleOptIn),
  confirmationTemplateId: Type.Optional(Fields.confirmationTemplateId),
}, { additionalProperties: false, examples: [{ name: 'Newsletter', description: 'Monthly product news', doubleOptIn: true }] });

const PatchBody = Type.Object({
  name: Type.Optional(Fields.name),
  description: Type.Optional(Fields.description),
  doubleOptIn: Type.Optional(Fields.doubleOptIn),
  confirmationTemplateId: Type.Optional(Fields.confirmationTemplateId),
}, { additionalProperties: false, examples: [{ name: 'Monthly newsletter' }, { description: null, doubleOptIn: false }] });

const NotFound = notFoundResponse('list', example.id);
const Invalid = invalidResponse('validation_failed: a field is missing, unknown, or out of its limits', 'name', 'must be 1 to 200 characters');

const tags = ['lists'];

export async function listRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;

  app.get('/api/v1/lists', {
    schema: {
      operationId: 'listLists',
      summary: 'List lists',
      description: 'Newest first by default; `nextCursor` fetches the next page.',
      tags,
      querystring: ListQuery,
      response: { 200: { ...listResponse(ListSchema), examples: [{ data: [example], nextCursor: null }] } },
    },
  }, async (request) => {
    const page = pageOf(request.query);
    return finishPage(await listLists(pool, request.auth.accountId, page), page, (l) => l.id);
  });

  app.post('/api/v1/lists', {
    schema: {
      operationId: 'createList',
      summary: 'Create a list',
      description: 'A named group of subscribers. With `doubleOptIn`, new members get a confirmation mail and stay `unconfirmed` until they follow its link.',
      tags,
      body: CreateBody,
      response: { 201: { ...ListSchema, examples: [{ ...example, subscriberCount: 0 }] }, 422: Invalid },
    },
  }, async (request, reply) => {
    const r = await accountWrite(app, request, (db) => createList(db, request.auth.accountId, request.body, clock.now()));
    return reply.code(201).send(withSandbox(r));
  });

  app.get('/api/v1/lists/:id', {
    schema: {
      operationId: 'getList',
      summary: 'Get a list',
      description: 'The list with its current member count.',
      tags,
      params: IdParam,
      response: { 200: { ...ListSchema, examples: [example] }, 404: NotFound },
    },
  }, async (request) => getList(pool, request.auth.accountId, request.params.id));

  app.patch('/api/v1/lists/:id', {
    schema: {
      operationId: 'updateList',
      summary: 'Update a list',
      description: 'Only the fields given change; null clears description or confirmationTemplateId.',
      tags,
      params: IdParam,
      body: PatchBody,
      response: { 200: { ...ListSchema, examples: [example] }, 404: NotFound, 422: Invalid },
    },
  }, async (request) => {
    const r = await accountWrite(app, request, (db) => updateList(db, request.auth.accountId, request.params.id, request.body, clock.now()));
    return withSandbox(r);
  });

  app.delete('/api/v1/lists/:id', {
    schema: {
      operationId: 'deleteList',
      summary: 'Delete a list',
      description: "Removes the list and its memberships; subscribers stay, with their other lists.",
      tags,
      params: IdParam,
      response: { 204: Type.Null({ description: 'Deleted' }), 404: NotFound },
    },
  }, async (request, reply) => {
    await accountWrite(app, request, (db) => deleteList(db, request.auth.accountId, request.params.id));
    return reply.code(204).send(null);
  });
}
