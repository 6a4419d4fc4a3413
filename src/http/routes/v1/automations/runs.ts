import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { cancelRun, getRun, listRuns } from '../../../../domain/automations/runs.js';
import { checkTriggerInput, triggerBatches, triggerEvent } from '../../../../domain/automations/trigger.js';
import { problemResponse } from '../../../problem.js';
import { finishPage, listResponse, pageOf } from '../../../pagination.js';
import { accountWrite, withSandbox } from '../../../account-write.js';
import { IdParam, invalidResponse, notFoundResponse } from '../common-schemas.js';
import {
  RunDetailSchema, runDetailExample, runExample, RunParams, RunSchema, RunsQuery, TriggerAccepted, TriggerBody,
} from './schemas.js';

const tags = ['automations'];
const RunNotFound = notFoundResponse('run', runExample.id);

/** POST /automations/trigger and the runs of an automation. */
export async function automationRunRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;
  const triggers = triggerBatches(pool);


  app.post('/api/v1/automations/trigger', {
    schema: {
      operationId: 'triggerAutomations',
      summary: 'Trigger an event for an address',
      description: 'Starts a run of every active automation listening for the event whose filter matches and whose reentry rule allows it, '
        + 'and wakes the runs of this address waiting for the event. No match is fine: an empty list. With a test key: the same 202 '
        + 'answer plus `sandbox: true` (the runs it would start, whose ids then exist nowhere) and nothing is started, woken or recorded. '
        + 'Idempotency-Key replays the first answer for 24 h.',
      tags,
      body: TriggerBody,
      response: {
        202: TriggerAccepted,
        422: invalidResponse('validation_failed: bad event name, address or data', 'email', 'is not an email address'),
      },
    },
  }, async (request, reply) => {
    const { accountId, mode } = request.auth;
    // A test key runs the live trigger in the request's sandbox transaction, which is rolled
    // back (account-write.ts): the same answer, and no run started, woken or recorded.
    if (mode === 'test') {
      const r = await accountWrite(app, request, (db) => triggerEvent(db, accountId, request.body, clock.now()));
      return reply.code(202).send(withSandbox(r));
    }
    const emailKey = checkTriggerInput(request.body);
    const result = await triggers.submit({ accountId, input: request.body, emailKey, now: clock.now() });
    return reply.code(202).send(result);
  });

  app.get('/api/v1/automations/:id/runs', {
    schema: {
      operationId: 'listAutomationRuns',
      summary: "List an automation's runs",
      description: 'Newest first by default; filter by status (active, waiting, completed, exited, failed).',
      tags,
      params: IdParam,
      querystring: RunsQuery,
      response: { 200: { ...listResponse(RunSchema), examples: [{ data: [runExample], nextCursor: null }] }, 404: notFoundResponse('automation', runExample.automationId) },
    },
  }, async (request) => {
    const page = pageOf(request.query);
    return finishPage(await listRuns(pool, request.auth.accountId, request.params.id, request.query.status, page), page, (r) => r.id);
  });

  app.get('/api/v1/automations/:id/runs/:runId', {
    schema: {
      operationId: 'getAutomationRun',
      summary: 'Get a run with its history',
      description: "Each step the run went through, with its time and outcome (sent with the message id, skipped with the reason, waiting, resumed, timed_out, then/else, updated, exited, failed).",
      tags,
      params: RunParams,
      response: { 200: { ...RunDetailSchema, examples: [runDetailExample] }, 404: RunNotFound },
    },
  }, async (request) => getRun(pool, request.auth.accountId, request.params.id, request.params.runId));

  app.post('/api/v1/automations/:id/runs/:runId/cancel', {
    schema: {
      operationId: 'cancelAutomationRun',
      summary: 'Cancel a run',
      description: 'Ends a run in progress: status exited, exitReason "cancelled". A run that already ended is a 409.',
      tags,
      params: RunParams,
      response: {
        200: { ...RunDetailSchema, examples: [{ ...runDetailExample, status: 'exited', exitReason: 'cancelled', position: null, waitingFor: null, wakesAt: null }] },
        404: RunNotFound,
        409: problemResponse('The run already ended', 'conflict', `run ${runExample.id} already ended (completed)`),
      },
    },
  }, async (request) => {
    const r = await accountWrite(app, request, (db) => cancelRun(db, request.auth.accountId, request.params.id, request.params.runId, clock.now()));
    return withSandbox(r);
  });
}
