import { finishPage, keyset, pageOf } from '../../../db/pagination.js';
import { MergeWarnings } from './merge-warnings.js';
import { ListQuery } from '../../pagination.js';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { notifySoon } from '../../../db/notify.js';
import { eventsOfMessages } from '../../../db/queries/events.js';
import { GroupCommit } from '../../../db/group-commit.js';
import { getMessage, insertAcceptedMessages, listMessages, recipientsOfGroup, type MessageRow, type RecipientRow, type SentEventRow } from '../../../db/queries/messages.js';
import { findSendingDomain, type SendingDomain } from '../../../domain/domains/domains.js';
import { toApiEvent, type ApiEvent } from '../../../domain/events.js';
import { SEND_LIMITS } from '../../../domain/sending/send-input.js';
import { sendBatch, sendEmail, type BatchItemResult, type SendContext } from '../../../domain/sending/sending.js';
import { SuppressionLookups } from '../../../domain/suppression.js';
import { batchItemProblems } from '../../batch-items.js';
import { TrackingLinks } from '../../../domain/tracking/links.js';
import { notFound } from '../../../errors.js';
import { problemBody } from '../../problem.js';
import type { FastifyRequest } from 'fastify';

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

function toRecipient(r: RecipientRow, bounce: Static<typeof Bounce> | null): Static<typeof Recipient> {
  return {
    bounce,
    id: r.id,
    email: r.to_email,
    type: r.recipient_type ?? 'to',
    status: r.status,
    attempts: r.attempts,
    lastResponse: r.last_response,
    lastMx: r.last_mx,
    nextAttemptAt: WAITING.has(r.status) ? r.next_attempt_at.toISOString() : null,
    deliveredAt: r.delivered_at?.toISOString() ?? null,
  };
}

const DOMAIN_CACHE_MS = 10_000;

const WAITING = new Set(['queued', 'scheduled', 'deferred', 'sending']);

function toSummary(m: Omit<MessageRow, 'html' | 'text' | 'attachments'>): Static<typeof MessageSummary> {
  return {
    id: m.id,
    status: m.status,
    from: { email: m.from_email, name: m.from_name },
    to: m.to_email,
    cc: m.cc,
    subject: m.subject,
    tags: m.tags,
    templateId: m.template_id,
    attempts: m.attempts,
    lastResponse: m.last_response,
    lastMx: m.last_mx,
    nextAttemptAt: WAITING.has(m.status) ? m.next_attempt_at.toISOString() : null,
    scheduledAt: m.scheduled_at?.toISOString() ?? null,
    deliveredAt: m.delivered_at?.toISOString() ?? null,
    createdAt: m.created_at.toISOString(),
  };
}

/** The latest hard or soft bounce of one message (one recipient) in a send's timeline, as its `bounce` field shows it. */
function lastBounce(events: ApiEvent[], messageId: string): Static<typeof Bounce> | null {
  const e = events.findLast((x) => x.messageId === messageId && (x.type === 'hard_bounce' || x.type === 'soft_bounce'));
  const b = e?.data.bounce as Record<string, unknown> | undefined;
  if (!e || !b || typeof b.reason !== 'string') return null;
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    type: e.type as 'hard_bounce' | 'soft_bounce', reason: b.reason, category: text(b.category) ?? 'unknown', status: text(b.status),
    diagnostic: text(b.diagnostic), mta: text(b.mta), occurredAt: e.occurredAt,
  };
}

export async function emailRoutes(app: FastifyInstance): Promise<void> {
  const links = new TrackingLinks(app.deps.config);
  // Concurrent accepts are written together: one statement and one commit per batch instead
  // of one per request (bench/send-api). Each request still answers only after its commit.
  const inserts = new GroupCommit<{ rows: MessageRow[]; events: SentEventRow[] }, true>(async (batch) => {
    await insertAcceptedMessages(app.deps.pool, batch.flatMap((b) => b.rows), batch.flatMap((b) => b.events), null);
    return batch.map(() => true as const);
  });
  // Verified domains change rarely; caching the positive answer for a few seconds saves a
  // query per send. A domain deleted meanwhile stops being accepted within DOMAIN_CACHE_MS.
  const domains = new Map<string, { domain: SendingDomain; at: number }>();
  const findDomain = async (accountId: string, fromEmail: string): Promise<SendingDomain | null> => {
    const key = `${accountId} ${fromEmail.slice(fromEmail.lastIndexOf('@') + 1).toLowerCase()}`;
    const hit = domains.get(key);
    if (hit && Date.now() - hit.at < DOMAIN_CACHE_MS) return hit.domain;
    const domain = await findSendingDomain(app.deps.pool, accountId, fromEmail);
    if (domains.size > 10_000) domains.clear();
    if (domain) domains.set(key, { domain, at: Date.now() });
    else domains.delete(key);
    return domain;
  };
  const suppression = new SuppressionLookups(app.deps.pool);
  const wakeWorkers = () => {
    notifySoon(app.deps.pool, 'postline_messages');
    notifySoon(app.deps.pool, 'postline_events');
  };
  const contextOf = (request: FastifyRequest): SendContext => ({
    db: app.deps.pool,
    config: app.deps.config,
    links,
    accountId: request.auth.accountId,
    mode: request.auth.mode,
    monthlyQuota: request.auth.monthlyQuota,
    now: app.deps.clock.now(),
    findDomain,
    storeAccepted: async (rows, events) => {
      await inserts.submit({ rows, events });
    },
    suppressedAmong: (accountId, emails) => suppression.suppressedAmong(accountId, emails),
    idempotency: request.idempotency,
  });

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
    const result = await sendEmail(contextOf(request), request.body as Static<typeof SendBody>);
    if (!result.sandbox) wakeWorkers();
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
    const body = request.body as { emails: Static<typeof SendBody>[] };
    const refused = batchItemProblems(request, 'emails');
    const valid = body.emails.map((item, index) => ({ item, index })).filter((x) => !refused.has(x.index));
    const sent = await sendBatch(contextOf(request), valid.map((x) => x.item));
    if (sent.some((r) => !('error' in r) && !r.sandbox)) wakeWorkers();
    const results: BatchItemResult[] = [
      ...sent.map((r) => ({ ...r, index: valid[r.index].index })),
      ...[...refused].map(([index, error]) => ({ index, error })),
    ].sort((a, b) => a.index - b.index);
    return {
      data: results.map((r) =>
        'error' in r
          ? { index: r.index, error: problemBody(r.error.code, r.error.message, r.error.errors, r.error.extra) }
          : r,
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
    const q = request.query as ListQuery & { status?: string; to?: string; tag?: string };
    const page = pageOf(q);
    const k = keyset(page, 'id', 5);
    const rows = await listMessages(app.deps.pool, request.auth.accountId, q, { ...k, limit: page.limit });
    const { data, nextCursor } = finishPage(rows, page, (r) => r.id);
    return { data: data.map(toSummary), nextCursor };
  });

  app.get('/api/v1/emails/:id', {
    schema: {
      operationId: 'getEmail',
      summary: 'Get an email with its status and event timeline',
      tags: ['emails'],
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
      response: { 200: MessageDetail },
    },
  }, async (request) => {
    const { id } = request.params as { id: string };
    const m = await getMessage(app.deps.pool, request.auth.accountId, id);
    if (!m) throw notFound(`email ${id}`);
    // Any recipient's id shows the whole send: its `to` row's fields, every recipient's status.
    const groupId = m.group_id ?? m.id;
    const recipients = await recipientsOfGroup(app.deps.pool, request.auth.accountId, groupId);
    const head = groupId === m.id ? m : ((await getMessage(app.deps.pool, request.auth.accountId, groupId)) ?? m);
    const events = await eventsOfMessages(app.deps.pool, request.auth.accountId, recipients.map((r) => r.id));
    const apiEvents = events.map(toApiEvent);
    return {
      ...toSummary(head),
      groupId,
      bcc: head.bcc,
      recipients: recipients.map((r) => toRecipient(r, lastBounce(apiEvents, r.id))),
      html: head.html,
      text: head.text,
      bounce: lastBounce(apiEvents, m.id),
      events: apiEvents,
      source: m.source_name && m.source_address ? { name: m.source_name, address: m.source_address } : null,
    };
  });
}
