import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PoolClient } from '../../../db/pool.js';
import type { CampaignStatus, RecipientRow } from '../../../db/queries/campaigns/campaigns.js';
import { toDefinition } from '../../../domain/campaigns/definition.js';
import {
  cancelCampaign, createCampaign, deleteCampaign, listCampaigns, pauseCampaign, requireCampaign, resumeCampaign, sendCampaign, updateCampaign, wakeCampaignRunner,
} from '../../../domain/campaigns/lifecycle.js';
import { listRecipients, loadCampaignReport } from '../../../domain/campaigns/report.js';
import { sendCampaignTest, TEST_SEND_MAX, wakeAfterTestSend } from '../../../domain/campaigns/test-send.js';
import { previewCampaign } from '../../../domain/campaigns/preview.js';
import { MergeWarnings } from './merge-warnings.js';
import { TrackingLinks } from '../../../domain/tracking/links.js';
import { finishPage, ListQuery, listResponse, pageOf } from '../../pagination.js';
import { problemBody } from '../../problem.js';
import { AppError } from '../../../errors.js';
import { accountWrite, withSandbox } from '../../account-write.js';
import { IdParam, invalidResponse, notFoundResponse, SandboxFlag } from './common-schemas.js';
import {
  atRiskResponse, CampaignDefinitionSchema, CampaignReportSchema, SavedCampaignSchema, CampaignStatusSchema, CreateCampaignBody, definitionExample,
  invalidStateResponse, PatchCampaignBody, RecipientSchema, recipientExample, reportExample, StateChangeSchema,
} from './campaign-schemas.js';

const tags = ['campaigns'];
const NotFound = notFoundResponse('campaign', definitionExample.id);
const Invalid = invalidResponse('validation_failed (per-field errors), sender_domain_unverified or template_error', 'audience.lists', 'unknown list lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c09');

function toRecipient(r: RecipientRow) {
  return {
    subscriberId: r.subscriber_id,
    messageId: r.message_id,
    email: r.email,
    status: r.status,
    attempts: r.attempts,
    lastResponse: r.last_response,
    deliveredAt: r.delivered_at?.toISOString() ?? null,
    openedAt: r.opened_at?.toISOString() ?? null,
    clickedAt: r.clicked_at?.toISOString() ?? null,
    queuedAt: r.created_at.toISOString(),
  };
}

/**
 * Campaigns (docs/campaigns.md). Writes with a test key run exactly as with a live key inside
 * a transaction that is rolled back (accountWrite): same validation and errors, `sandbox:
 * true`, nothing stored or queued.
 */
export async function campaignRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock, config } = app.deps;
  const links = new TrackingLinks(config);
  const wakeRunner = () => wakeCampaignRunner(pool);

  app.get('/api/v1/campaigns', {
    schema: {
      operationId: 'listCampaigns',
      summary: 'List campaigns',
      description: 'Newest first by default; filter by `status`. Bodies (html, text) are left out of lists.',
      tags,
      querystring: Type.Intersect([ListQuery, Type.Object({ status: Type.Optional(CampaignStatusSchema) })]),
      response: { 200: { ...listResponse(CampaignDefinitionSchema), examples: [{ data: [{ ...definitionExample, html: null }], nextCursor: null }] } },
    },
  }, async (request) => {
    const q = request.query;
    const page = pageOf(q);
    const rows = await listCampaigns(pool, request.auth.accountId, q.status ?? null, page);
    const { data, nextCursor } = finishPage(rows, page, (r) => r.id);
    return { data: data.map(toDefinition), nextCursor };
  });

  app.post('/api/v1/campaigns', {
    schema: {
      operationId: 'createCampaign',
      summary: 'Create a campaign draft',
      description:
        'Validated like POST /api/v1/emails (verified sender domain, no CR/LF, template exists and parses) plus the audience ' +
        '(lists and segment of this account). Merge fields: `{{ subscriber.email }}`, `{{ subscriber.name }}`, ' +
        '`{{ subscriber.attributes.<key> | fallback }}`, the campaign `variables`, `{{ unsubscribe_url }}`. The answer\'s `warnings` name unknown ' +
        'subscriber fields, attributes no subscriber of the audience has, and names that are not in `variables`.',
      tags,
      body: CreateCampaignBody,
      response: { 201: { ...SavedCampaignSchema, examples: [{ ...definitionExample, warnings: [] }] }, 422: Invalid },
    },
  }, async (request, reply) => {
    const r = await accountWrite(app, request, (db) => createCampaign(db, request.auth.accountId, request.body, clock.now()));
    return reply.code(201).send(withSandbox(r));
  });

  app.get('/api/v1/campaigns/:id', {
    schema: {
      operationId: 'getCampaign',
      summary: 'Get a campaign with its full report',
      description: 'The definition, status, progress, counts, rates, top links and an hourly timeline. Counters are maintained as events happen (docs/campaigns.md#report).',
      tags,
      params: IdParam,
      response: { 200: { ...CampaignReportSchema, examples: [reportExample] }, 404: NotFound },
    },
  }, async (request) => {
    return loadCampaignReport(pool, request.auth.accountId, request.params.id, clock.now());
  });

  app.patch('/api/v1/campaigns/:id', {
    schema: {
      operationId: 'updateCampaign',
      summary: 'Change a draft or scheduled campaign',
      description: 'Only while `draft` or `scheduled` (else 409 `invalid_state`). The merged definition is validated as a whole.',
      tags,
      params: IdParam,
      body: PatchCampaignBody,
      response: { 200: { ...SavedCampaignSchema, examples: [{ ...definitionExample, warnings: [] }] }, 404: NotFound, 409: invalidStateResponse, 422: Invalid },
    },
  }, async (request) => {
    const r = await accountWrite(app, request, (db) =>
      updateCampaign(db, request.auth.accountId, request.params.id, request.body, clock.now()),
    );
    return withSandbox(r);
  });

  app.delete('/api/v1/campaigns/:id', {
    schema: {
      operationId: 'deleteCampaign',
      summary: 'Delete a draft or scheduled campaign',
      description: 'Only while `draft` or `scheduled` (else 409 `invalid_state`; cancel a sending campaign instead).',
      tags,
      params: IdParam,
      response: { 204: Type.Null({ description: 'Deleted' }), 404: NotFound, 409: invalidStateResponse },
    },
  }, async (request, reply) => {
    await accountWrite(app, request, (db) => deleteCampaign(db, request.auth.accountId, request.params.id));
    return reply.code(204).send(null);
  });

  app.post('/api/v1/campaigns/:id/send', {
    schema: {
      operationId: 'sendCampaign',
      summary: 'Queue a draft for sending',
      description:
        '202 `{id, status}`: `sending` now, or `scheduled` when `scheduledAt` is in the future. The definition is checked again and its ' +
        'content frozen. Sending twice (also concurrently) answers 409 `invalid_state` and never sends twice; 409 `account_at_risk` while ' +
        'the account\'s health is at_risk and not acknowledged; 422 `template_error` (one `errors` entry per placeholder) when the campaign is `strict` ' +
        'and a placeholder has no value and no fallback for the audience.',
      tags,
      params: IdParam,
      response: {
        202: { ...StateChangeSchema, examples: [{ id: definitionExample.id, status: 'sending' }] },
        404: NotFound,
        409: atRiskResponse,
        422: Invalid,
      },
    },
  }, async (request, reply) => {
    const r = await accountWrite(app, request, (db) => sendCampaign(db, request.auth.accountId, request.params.id, clock.now()));
    if (!r.sandbox) wakeRunner();
    return reply.code(202).send(withSandbox(r));
  });

  const stateRoute = (
    path: string,
    operationId: string,
    summary: string,
    description: string,
    run: (accountId: string, id: string) => (db: PoolClient) => Promise<{ id: string; status: CampaignStatus }>,
    conflict = invalidStateResponse,
  ) =>
    app.post(`/api/v1/campaigns/:id/${path}`, {
      schema: {
        operationId,
        summary,
        description,
        tags,
        params: IdParam,
        response: { 200: { ...StateChangeSchema, examples: [{ id: definitionExample.id, status: path === 'pause' ? 'paused' : path === 'resume' ? 'sending' : 'cancelled' }] }, 404: NotFound, 409: conflict },
      },
    }, async (request) => {
      const r = await accountWrite(app, request, async (db) => {
        const c = await run(request.auth.accountId, request.params.id)(db);
        return { id: c.id, status: c.status };
      });
      if (!r.sandbox) wakeRunner();
      return withSandbox(r);
    });

  stateRoute('pause', 'pauseCampaign', 'Pause a sending campaign', 'sending → paused. Unsent messages are held at once (in-flight ones finish); the fan-out stops.',
    (a, id) => (db) => pauseCampaign(db, a, id, clock.now()));
  stateRoute('resume', 'resumeCampaign', 'Resume a paused campaign', 'paused → sending. Held messages are released, spaced by the throttle. 409 `account_at_risk` while health is at_risk and not acknowledged.',
    (a, id) => (db) => resumeCampaign(db, a, id, clock.now()), atRiskResponse);
  stateRoute('cancel', 'cancelCampaign', 'Cancel a campaign', 'draft, scheduled, sending or paused → cancelled. Unsent messages are removed and counted as `cancelled`.',
    (a, id) => (db) => cancelCampaign(db, a, id, clock.now()));

  app.post('/api/v1/campaigns/:id/test', {
    // An unknown (or another account's) campaign is a 404 before the body is validated.
    preValidation: async (request) => {
      await requireCampaign(pool, request.auth.accountId, request.params.id);
    },
    schema: {
      operationId: 'sendCampaignTest',
      summary: 'Send test copies of a campaign',
      description:
        'Rendered copies to up to 5 addresses with a sample subscriber (the first active member of the audience, else a stand-in), ' +
        'subject prefixed `[Test]`. They are ordinary messages (quota, suppression apply), not part of the campaign\'s report. Any state.',
      tags,
      params: IdParam,
      body: Type.Object({ to: Type.Array(Type.String({ minLength: 3, maxLength: 254 }), { minItems: 1, maxItems: TEST_SEND_MAX }) }, {
        additionalProperties: false,
        examples: [{ to: ['me@acme.com'] }],
      }),
      response: {
        200: Type.Object(
          {
            sample: Type.Object({ id: Type.String(), email: Type.String() }),
            data: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'Per address: the send result, or `{to, error: <problem>}`' }),
            sandbox: SandboxFlag,
          },
          { examples: [{ sample: { id: 'sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10', email: 'ada@example.com' }, data: [{ id: 'msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c40', status: 'queued', to: 'me@acme.com', subject: '[Test] What is new in November, Ada', sandbox: false }] }] },
        ),
        404: NotFound,
      },
    },
  }, async (request) => {
    const c = await requireCampaign(pool, request.auth.accountId, request.params.id);
    const { to } = request.body;
    const ctx = { db: pool, config, links, accountId: request.auth.accountId, mode: request.auth.mode, monthlyQuota: request.auth.monthlyQuota, now: clock.now() };
    const data: Record<string, unknown>[] = [];
    let sample = { id: '', email: '' };
    for (const address of to) {
      try {
        const r = await sendCampaignTest(ctx, c, [address]);
        sample = r.sample;
        data.push(...r.results.map((x) => ({ ...x })));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        data.push({ to: address, error: problemBody(err.code, err.message, err.errors, err.extra) });
      }
    }
    if (data.some((d) => d.sandbox === false)) {
      wakeAfterTestSend(pool);
    }
    return { sample, data, ...(request.auth.mode === 'test' ? { sandbox: true } : {}) };
  });

  app.get('/api/v1/campaigns/:id/preview', {
    schema: {
      operationId: 'previewCampaign',
      summary: 'Preview a campaign for one subscriber, with its audience size',
      description:
        'The message as `subscriberId` (an id or address; default: the first active member of the audience) would get it, rendered as delivery renders it, ' +
        'the number of people a send now would reach, and the merge-field warnings. Nothing is stored or sent. Any state.',
      tags,
      params: IdParam,
      querystring: Type.Object({ subscriberId: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: 'Render for this subscriber (id or address)' })) }),
      response: {
        200: Type.Object({
          subscriber: Type.Object({ id: Type.String(), email: Type.String(), name: Type.Union([Type.String(), Type.Null()]) }),
          subject: Type.String(),
          html: Type.Union([Type.String(), Type.Null()]),
          text: Type.Union([Type.String(), Type.Null()]),
          audience: Type.Object({
            recipients: Type.Integer({ description: 'Active, not suppressed, counted once: who a send now reaches' }),
            subscribers: Type.Integer({ description: 'Every confirmed member of the audience, whatever their status' }),
          }),
          warnings: MergeWarnings,
        }, {
          examples: [{
            subscriber: { id: 'sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10', email: 'ada@example.com', name: 'Ada' }, subject: 'What is new in November, Ada',
            html: '<p>Hi Ada, you are on the pro plan.</p>', text: null, audience: { recipients: 1204, subscribers: 1250 }, warnings: [],
          }],
        }),
        404: NotFound,
        422: Invalid,
      },
    },
  }, async (request) => previewCampaign(pool, config, request.auth.accountId, request.params.id, request.query.subscriberId, clock.now()));

  app.get('/api/v1/campaigns/:id/recipients', {
    schema: {
      operationId: 'listCampaignRecipients',
      summary: 'List a campaign\'s recipients and their delivery status',
      description: 'One row per message, in subscriber id order (`order`, `cursor` as elsewhere); filter by message `status`.',
      tags,
      params: IdParam,
      querystring: Type.Intersect([
        ListQuery,
        Type.Object({ status: Type.Optional(Type.Union(['queued', 'sending', 'delivered', 'deferred', 'bounced', 'failed', 'held'].map((s) => Type.Literal(s)))) }),
      ]),
      response: { 200: { ...listResponse(RecipientSchema), examples: [{ data: [recipientExample], nextCursor: null }] }, 404: NotFound },
    },
  }, async (request) => {
    const q = request.query;
    const c = await requireCampaign(pool, request.auth.accountId, request.params.id);
    const page = pageOf(q);
    const rows = await listRecipients(pool, request.auth.accountId, c.id, q.status ?? null, page);
    const { data, nextCursor } = finishPage(rows, page, (r) => r.subscriber_id);
    return { data: data.map(toRecipient), nextCursor };
  });
}
