import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createAutomation, deleteAutomation, getAutomation, listAutomations, updateAutomation } from '../../../../domain/automations/automations.js';
import { finishPage, ListQuery, listResponse, pageOf } from '../../../pagination.js';
import { accountWrite, withSandbox } from '../../../account-write.js';
import { IdParam, invalidResponse, notFoundResponse } from '../common-schemas.js';
import { AutomationSchema, automationExample, CreateBody, PatchBody, SavedAutomationSchema } from './schemas.js';

const tags = ['automations'];
const NotFound = notFoundResponse('automation', automationExample.id);
const Invalid = invalidResponse('validation_failed: a bad step, duration, rule, or a template, list or sender that does not exist, named by its path',
  'steps[2].then[0].templateId', 'no template tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c31 in this account');

/**
 * Automation definitions. Writes with a test key run exactly as live ones (same validation,
 * same errors) in a transaction that is rolled back, and answer with `sandbox: true`.
 */
export async function automationDefinitionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;

  app.get('/api/v1/automations', {
    schema: {
      operationId: 'listAutomations',
      summary: 'List automations',
      description: 'Each with its counters (runs started, completed, exited; per send step sent, delivered, opened, clicked).',
      tags,
      querystring: ListQuery,
      response: { 200: { ...listResponse(AutomationSchema), examples: [{ data: [automationExample], nextCursor: null }] } },
    },
  }, async (request) => {
    const page = pageOf(request.query);
    return finishPage(await listAutomations(pool, request.auth.accountId, page), page, (a) => a.id);
  });

  app.post('/api/v1/automations', {
    schema: {
      operationId: 'createAutomation',
      summary: 'Create an automation',
      description: 'Validates every step; a problem is a 422 naming its path (steps[2].then[0].templateId). Templates and lists must exist, senders must be on a verified domain.',
      tags,
      body: CreateBody,
      response: { 201: { ...SavedAutomationSchema, examples: [{ ...automationExample, warnings: [] }] }, 422: Invalid },
    },
  }, async (request, reply) => {
    const r = await accountWrite(app, request, (db) => createAutomation(db, request.auth.accountId, request.body, clock.now()));
    return reply.code(201).send(withSandbox(r));
  });

  app.get('/api/v1/automations/:id', {
    schema: {
      operationId: 'getAutomation',
      summary: 'Get an automation with its counters',
      description: 'Counters are kept up to date as runs start and finish and as their messages are delivered, opened and clicked.',
      tags,
      params: IdParam,
      response: { 200: { ...AutomationSchema, examples: [automationExample] }, 404: NotFound },
    },
  }, async (request) => getAutomation(pool, request.auth.accountId, request.params.id));

  app.patch('/api/v1/automations/:id', {
    schema: {
      operationId: 'updateAutomation',
      summary: 'Update or pause an automation',
      description: 'Only the fields given change. Pausing stops new runs; runs already waiting keep waiting and go on when they wake.',
      tags,
      params: IdParam,
      body: PatchBody,
      response: { 200: { ...SavedAutomationSchema, examples: [{ ...automationExample, warnings: [] }] }, 404: NotFound, 422: Invalid },
    },
  }, async (request) => {
    const r = await accountWrite(app, request, (db) => updateAutomation(db, request.auth.accountId, request.params.id, request.body, clock.now()));
    return withSandbox(r);
  });

  app.delete('/api/v1/automations/:id', {
    schema: {
      operationId: 'deleteAutomation',
      summary: 'Delete an automation',
      description: 'Removes the definition with its runs and their history; messages already sent stay.',
      tags,
      params: IdParam,
      response: { 204: Type.Null({ description: 'Deleted' }), 404: NotFound },
    },
  }, async (request, reply) => {
    await accountWrite(app, request, (db) => deleteAutomation(db, request.auth.accountId, request.params.id));
    return reply.code(204).send(null);
  });
}
