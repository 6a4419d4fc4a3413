import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { MergeWarnings } from './merge-warnings.js';
import { SEND_LIMITS } from '../../../domain/sending/send-input.js';
import { SendPipeline } from '../../../domain/sending/send-pipeline.js';
import { getSentEmail, listSentEmails } from '../../../domain/sending/sent-emails.js';
import type { BatchItemResult } from '../../../domain/sending/batch-sends.js';
import { batchItemProblems } from '../../batch-items.js';
import { ListQuery, pageOf } from '../../pagination.js';
import { problemBody } from '../../problem.js';

const Email = Type.String({ minLength: 3, maxLength: 254, description: 'A bare address: name@example.com' });

const SendBody = Type.Object(
  {
    to: Email,
    from: Type.Object({ email: Email, name: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
    subject: Type.Optional(Type.String({ maxLength: 4000, description: 'May contain {{variables}}; at most 998 bytes once rendered' })),
    html: Type.Optional(Type.String({ description: 'HTML body; at most 2 MB' })),
    text: Type.Optional(Type.String({ description: 'Plain-text body; generated from html when absent' })),
    templateId: Type.Optional(Type.String({ maxLength: 64, description: 'A template of this account; supplies subject/html/text the request leaves out' })),
    variables: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Values for {{merge_fields}} and [for] loops' })),
    cc: Type.Optional(Type.Array(Email, { maxItems: 50 })),
    bcc: Type.Optional(Type.Array(Email, { maxItems: 50 })),
    replyTo: Type.Optional(Email),
    headers: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 2000 }), { maxProperties: 50 })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\r\\n]*$' }), { maxItems: 20 })),
    attachments: Type.Optional(
      Type.Array(
        Type.Object(
          { filename: Type.String({ minLength: 1, maxLength: 255 }), content: Type.String({ description: 'base64' }), contentType: Type.Optional(Type.String({ maxLength: 255 })) },
          { additionalProperties: false },
        ),
        { maxItems: 20 },
      ),
    ),
    scheduledAt: Type.Optional(Type.String({ format: 'date-time', description: 'Deliver at this time (up to 30 days ahead)' })),
    tracking: Type.Optional(Type.Object(
      { opens: Type.Optional(Type.Boolean({ default: true })), clicks: Type.Optional(Type.Boolean({ default: true })) },
      { additionalProperties: false, description: 'Open and click tracking of this message, each on unless false; the unsubscribe footer is always added' },
    )),
    strict: Type.Optional(Type.Boolean({ description: 'Refuse with 422 template_error, instead of answering a warning, when a placeholder has no value and no fallback' })),
  },
  {
    additionalProperties: false,
    examples: [{ to: 'ada@example.com', from: { email: 'hello@acme.com', name: 'Acme' }, subject: 'Welcome, {{ first_name | there }}!', html: '<p>Hi {{ first_name | there }}</p>', variables: { first_name: 'Ada' } }],
  },
);

const Accepted = Type.Object({
  id: Type.String({ description: 'msg_…; with a test key a simulated sbx_… id' }),
  status: Type.Union([Type.Literal('queued'), Type.Literal('scheduled')]),
  to: Type.String(),
  subject: Type.String(),
  warnings: MergeWarnings,
  sandbox: Type.Boolean({ description: 'true for a test key: nothing was stored or sent' }),
});

const EventItem = Type.Object({
  id: Type.String(),
  type: Type.String(),
  email: Type.String(),
  messageId: Type.Union([Type.String(), Type.Null()]),
  url: Type.Optional(Type.String()),
  occurredAt: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  campaignId: Type.Optional(Type.String({ description: 'Events of campaign messages: the campaign' })),
});

const MessageSummary = Type.Object({
  id: Type.String(),
  status: Type.String({ description: 'queued, scheduled, sending, delivered, deferred, bounced, failed or held (a message of a paused campaign)' }),
  from: Type.Object({ email: Type.String(), name: Type.Union([Type.String(), Type.Null()]) }),
  to: Type.String(),
  cc: Type.Array(Type.String()),
  subject: Type.String(),
  tags: Type.Array(Type.String()),
  templateId: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Integer(),
  lastResponse: Type.Union([Type.String(), Type.Null()]),
  lastMx: Type.Union([Type.String(), Type.Null()]),
  nextAttemptAt: Type.Union([Type.String(), Type.Null()]),
  scheduledAt: Type.Union([Type.String(), Type.Null()]),
  deliveredAt: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
});
const NullableText = (description: string) => Type.Union([Type.String({ description }), Type.Null()]);
const Bounce = Type.Object(
  {
    type: Type.Union([Type.Literal('hard_bounce'), Type.Literal('soft_bounce')]),
    reason: Type.String({ description: 'The bounce reason (docs/bounces.md): user_unknown, mailbox_full, blocked, …' }),
    category: Type.String({ description: 'dead (suppressed), recipient, sender (our side: never suppresses) or unknown' }),
    status: NullableText('Enhanced status code, e.g. 5.1.1'),
    diagnostic: NullableText('What the receiving server said'),
    mta: NullableText('The server that refused the message'),
    occurredAt: Type.String(),
  },
  { description: 'The bounce that ended this message, null when it did not bounce' },
);
const Recipient = Type.Object({
  id: Type.String({ description: 'The recipient\'s own message id: its events, webhooks and bounces carry it' }),
  email: Type.String(),
  type: Type.Union([Type.Literal('to'), Type.Literal('cc'), Type.Literal('bcc')]),
  status: Type.String({ description: 'queued, scheduled, sending, delivered, deferred, bounced, failed, suppressed (on the suppression list: not sent) or held (a message of a paused campaign)' }),
  attempts: Type.Integer(),
  lastResponse: Type.Union([Type.String(), Type.Null()]),
  lastMx: Type.Union([Type.String(), Type.Null()]),
  nextAttemptAt: Type.Union([Type.String(), Type.Null()]),
  deliveredAt: Type.Union([Type.String(), Type.Null()]),
  bounce: Type.Union([Bounce, Type.Null()], { description: 'The bounce that ended this recipient\'s delivery, null when it did not bounce' }),
});
const MessageDetail = Type.Intersect([
  MessageSummary,
  Type.Object({
    groupId: Type.String({ description: 'The id the send was accepted under (the `to` recipient\'s id)' }),
    bcc: Type.Array(Type.String()),
    recipients: Type.Array(Recipient, { description: 'Every envelope recipient of the send with its own delivery status, `to` first' }),
    html: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    bounce: Type.Union([Bounce, Type.Null()], { description: 'The bounce that ended the message of the requested id, null when it did not bounce' }),
    events: Type.Array(EventItem, { description: 'The events of every recipient of the send, oldest first' }),
    source: Type.Union([
      Type.Object({ name: Type.String({ description: 'The source of the delivery policy' }), address: Type.String({ description: 'The IP address it connected from' }) }),
      Type.Null(),
    ], { description: 'The source address the message of the requested id last left from (docs/sending-identity.md); null when the deployment has no sources or it has not been sent yet' }),
  }),
]);

/** The Idempotency-Key claim the request runs under (plugins/idempotency.ts), as the send pipeline takes it. */
function claimOf(request: FastifyRequest): { ref: string; takenOver: boolean } | undefined {
  return request.idempotency && { ref: request.idempotency.ref, takenOver: request.idempotency.takenOver };
}

export async function emailRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const pipeline = new SendPipeline({ ...app.deps, writes: app.requestWrites });

  app.post('/api/v1/emails', {
    schema: {
      operationId: 'sendEmail',
      summary: 'Send an email',
      description:
        'Live key: validates, checks the verified sender domain, the suppression list and the quota, stores the message and answers 202 `queued` (or `scheduled`). ' +
        'Test key: validates and renders only and answers the same 202 with an `sbx_` id and `sandbox: true`; nothing is stored, sent, counted or recorded. ' +
        '`warnings` names placeholders that rendered empty without a fallback; with `strict: true` they are a 422 `template_error` instead.',
      tags: ['emails'],
      body: SendBody,
      response: {
        202: {
          ...Accepted,
          description: 'Accepted and queued (a test key: validated and rendered only, `sandbox: true`)',
          examples: [
            { id: 'msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d', status: 'queued', to: 'ada@example.com', subject: 'Welcome, Ada!', warnings: [], sandbox: false },
            { id: 'sbx_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d', status: 'queued', to: 'ada@example.com', subject: 'Welcome, !', warnings: [{ field: 'first_name', message: 'has no value and no fallback, so it renders empty; give it a value or write {{ first_name | fallback }}' }], sandbox: true },
          ],
        },
      },
    },
  }, async (request, reply) => {
    const result = await pipeline.send(request.auth, request.body, claimOf(request));
    return reply.code(202).send(result);
  });

  app.post('/api/v1/emails/batch', {
    // Items are answered one by one, also when one breaks the schema or holds NUL: the schema
    // error is attached rather than thrown (batch-items.ts splits it by item), and the input
    // rule leaves the items' strings to batchItemProblems.
    attachValidation: true,
    config: { bodyTextCheckedByHandler: ['emails'] },
    schema: {
      operationId: 'sendEmailBatch',
      summary: 'Send up to 500 emails in one request',
      description: 'Each item is validated and answered on its own, in order: `{index, id, status…}` when accepted, `{index, error: <problem>}` when not. The accepted ones are stored together.',
      tags: ['emails'],
      body: Type.Object({ emails: Type.Array(SendBody, { minItems: 1, maxItems: SEND_LIMITS.batchSize }) }, { additionalProperties: false }),
      response: {
        200: Type.Object(
          { data: Type.Array(Type.Record(Type.String(), Type.Unknown())) },
          { examples: [{ data: [{ index: 0, id: 'msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d', status: 'queued', to: 'ada@example.com', subject: 'Hi', sandbox: false }, { index: 1, error: { status: 422, code: 'recipient_suppressed', title: 'Recipient suppressed', detail: 'bob@example.com is on this account\'s suppression list' } }] }] },
        ),
      },
    },
  }, async (request) => {
    const refused = batchItemProblems(request, 'emails');
    const valid = request.body.emails.map((item, index) => ({ item, index })).filter((x) => !refused.has(x.index));
    const sent = await pipeline.sendBatch(request.auth, valid.map((x) => x.item), claimOf(request));
    const results: BatchItemResult[] = [
      ...sent.map((r) => ({ ...r, index: valid[r.index].index })),
      ...[...refused].map(([index, error]) => ({ index, error })),
    ].sort((a, b) => a.index - b.index);
    return {
      data: results.map((r) =>
        'error' in r
          ? { index: r.index, error: problemBody(r.error.code, r.error.message, r.error.errors, r.error.extra) }
          : { ...r },
      ),
    };
  });

  app.get('/api/v1/emails', {
    schema: {
      operationId: 'listEmails',
      summary: 'List sent emails',
      tags: ['emails'],
      querystring: Type.Intersect([
        ListQuery,
        Type.Object({
          status: Type.Optional(Type.Union(['queued', 'scheduled', 'sending', 'delivered', 'deferred', 'bounced', 'failed', 'suppressed', 'held'].map((s) => Type.Literal(s)))),
          to: Type.Optional(Type.String({ maxLength: 254 })),
          tag: Type.Optional(Type.String({ maxLength: 100 })),
        }),
      ]),
      response: { 200: Type.Object({ data: Type.Array(MessageSummary), nextCursor: Type.Union([Type.String(), Type.Null()]) }) },
    },
  }, async (request) => {
    const { limit, order, cursor, ...filter } = request.query;
    return listSentEmails(app.deps.pool, request.auth.accountId, filter, pageOf({ limit, order, cursor }));
  });

  app.get('/api/v1/emails/:id', {
    schema: {
      operationId: 'getEmail',
      summary: 'Get an email with its status and event timeline',
      tags: ['emails'],
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
      response: { 200: MessageDetail },
    },
  }, async (request) => getSentEmail(app.deps.pool, request.auth.accountId, request.params.id));
}
