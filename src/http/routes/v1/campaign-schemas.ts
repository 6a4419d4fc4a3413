import { MergeWarnings } from './merge-warnings.js';
import { Type } from 'typebox';
import { CAMPAIGN_LIMITS } from '../../../domain/campaigns/definition.js';
import { SEND_LIMITS } from '../../../domain/sending/send-input.js';
import { problemResponse } from '../../problem.js';
import { SandboxFlag } from './common-schemas.js';
import { COUNT_NAMES, type CountName } from '../../../domain/stats/counters.js';

/** TypeBox schemas and examples of the campaign routes (campaigns.ts). */

const Email = Type.String({ minLength: 3, maxLength: 254, description: 'A bare address: name@example.com' });
const Id = (prefix: string) => Type.String({ maxLength: 64, description: `${prefix}_…` });

export const CampaignStatusSchema = Type.Union(
  [Type.Literal('draft'), Type.Literal('scheduled'), Type.Literal('sending'), Type.Literal('paused'), Type.Literal('sent'), Type.Literal('cancelled')],
  { description: 'draft → scheduled → sending → sent; sending ⇄ paused; draft, scheduled, sending, paused → cancelled' },
);

const AudienceSchema = Type.Object(
  {
    lists: Type.Array(Id('lst'), { minItems: 1, maxItems: CAMPAIGN_LIMITS.lists, description: 'Active subscribers of these lists (one message per address)' }),
    segment: Type.Optional(Type.Union([Id('seg'), Type.Null()], { description: 'Only subscribers matching this segment' })),
    excludeLists: Type.Optional(Type.Array(Id('lst'), { maxItems: CAMPAIGN_LIMITS.lists, description: 'Minus subscribers of these lists' })),
  },
  { additionalProperties: false },
);

const fields = {
  name: Type.String({ minLength: 1, maxLength: CAMPAIGN_LIMITS.name }),
  subject: Type.String({ minLength: 1, maxLength: 4000, description: 'May contain {{ merge fields }}; at most 998 bytes once rendered' }),
  from: Type.Object({ email: Email, name: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
  replyTo: Type.Union([Email, Type.Null()]),
  html: Type.Union([Type.String({ maxLength: SEND_LIMITS.bodyBytes }), Type.Null()], { description: 'HTML body (template language); stored once, rendered per recipient at delivery' }),
  text: Type.Union([Type.String({ maxLength: SEND_LIMITS.bodyBytes }), Type.Null()], { description: 'Plain-text body; made from html when absent' }),
  templateId: Type.Union([Id('tpl'), Type.Null()], { description: 'A template supplying the parts the campaign leaves out; copied in when the campaign is sent' }),
  variables: Type.Record(Type.String(), Type.Unknown(), { description: 'Defaults for merge fields; `subscriber.*` and `unsubscribe_url` are set per recipient' }),
  audience: AudienceSchema,
  tags: Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\r\\n]*$' }), { maxItems: CAMPAIGN_LIMITS.tags }),
  headers: Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 2000 }), { maxProperties: CAMPAIGN_LIMITS.headers }),
  scheduledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Send starts at this time (up to 365 days ahead) once the campaign is sent' }),
  throttle: Type.Integer({ minimum: 1, maximum: CAMPAIGN_LIMITS.throttleMax, description: 'At most this many messages per minute' }),
  strict: Type.Boolean({
    description: 'Refuse the send (422 `template_error` naming each placeholder) when a placeholder has no value and no fallback for the audience, instead of only warning on save',
  }),
};

const createExample = {
  name: 'November newsletter',
  subject: 'What is new in November, {{ subscriber.name | friend }}',
  from: { email: 'news@acme.com', name: 'Acme' },
  html: '<p>Hi {{ subscriber.name | there }}, you are on the {{ subscriber.attributes.plan | free }} plan.</p><p><a href="https://acme.com/blog">Read the blog</a></p>',
  audience: { lists: ['lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01'], excludeLists: ['lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c02'] },
  tags: ['newsletter'],
  throttle: 6000,
};

export const CreateCampaignBody = Type.Object(
  {
    name: fields.name,
    subject: Type.Optional(fields.subject),
    from: fields.from,
    replyTo: Type.Optional(fields.replyTo),
    html: Type.Optional(fields.html),
    text: Type.Optional(fields.text),
    templateId: Type.Optional(fields.templateId),
    variables: Type.Optional(fields.variables),
    audience: fields.audience,
    tags: Type.Optional(fields.tags),
    headers: Type.Optional(fields.headers),
    scheduledAt: Type.Optional(fields.scheduledAt),
    throttle: Type.Optional(fields.throttle),
    // The default only on create: a PATCH without `strict` keeps the stored value.
    strict: Type.Optional(Type.Boolean({ ...fields.strict, default: false })),
  },
  { additionalProperties: false, examples: [createExample] },
);

export const PatchCampaignBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    subject: Type.Optional(fields.subject),
    from: Type.Optional(fields.from),
    replyTo: Type.Optional(fields.replyTo),
    html: Type.Optional(fields.html),
    text: Type.Optional(fields.text),
    templateId: Type.Optional(fields.templateId),
    variables: Type.Optional(fields.variables),
    audience: Type.Optional(fields.audience),
    tags: Type.Optional(fields.tags),
    headers: Type.Optional(fields.headers),
    scheduledAt: Type.Optional(fields.scheduledAt),
    throttle: Type.Optional(Type.Union([fields.throttle, Type.Null()], { description: 'Messages per minute; null removes the throttle' })),
    strict: Type.Optional(fields.strict),
  },
  { additionalProperties: false, examples: [{ subject: 'Our November news', scheduledAt: '2026-11-25T09:00:00.000Z' }] },
);

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const definitionProps = {
  id: Type.String({ description: 'cmp_…' }),
  name: Type.String(),
  status: CampaignStatusSchema,
  subject: Nullable(Type.String()),
  from: Type.Object({ email: Type.String(), name: Nullable(Type.String()) }),
  replyTo: Nullable(Type.String()),
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  templateId: Nullable(Type.String()),
  variables: Type.Record(Type.String(), Type.Unknown()),
  audience: Type.Object({ lists: Type.Array(Type.String()), segment: Nullable(Type.String()), excludeLists: Type.Array(Type.String()) }),
  tags: Type.Array(Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  scheduledAt: Nullable(Type.String({ format: 'date-time' })),
  throttle: Type.Union([Type.Integer(), Type.Null()]),
  strict: Type.Boolean({ description: 'The send refuses placeholders that render empty for the audience' }),
  pauseReason: Nullable(Type.String({ description: '`paused by request`, `account_at_risk` (health), `quota_exceeded`' })),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
};

export const CampaignDefinitionSchema = Type.Object({ ...definitionProps, sandbox: SandboxFlag });
/** A create or PATCH answer: the definition and its merge-field warnings. */
export const SavedCampaignSchema = Type.Object({ ...definitionProps, warnings: MergeWarnings, sandbox: SandboxFlag });

export const definitionExample = {
  id: 'cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20',
  ...createExample,
  status: 'draft',
  from: { email: 'news@acme.com', name: 'Acme' },
  replyTo: null,
  text: null,
  templateId: null,
  variables: {},
  audience: { lists: ['lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01'], segment: null, excludeLists: ['lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c02'] },
  headers: {},
  scheduledAt: null,
  strict: false,
  pauseReason: null,
  createdAt: '2026-11-20T10:15:30.123Z',
  updatedAt: '2026-11-20T10:15:30.123Z',
};

const countDescriptions: Partial<Record<CountName, string>> = {
  sent: 'Messages queued for delivery (`sent` events)',
  deferred: 'Deferral events (temporary failures; retried)',
  uniqueOpens: 'Messages opened at least once',
  machineOpens: 'Opens by mail privacy proxies (e.g. Apple Mail Privacy Protection)',
  uniqueClicks: 'Messages with at least one click',
};

/** The counts of a report or of GET /api/v1/stats: one integer per rollup counter. */
export const CountsSchema = Type.Object(
  Object.fromEntries(COUNT_NAMES.map((n) => [n, Type.Integer(countDescriptions[n] ? { description: countDescriptions[n] } : {})])) as Record<
    CountName,
    ReturnType<typeof Type.Integer>
  >,
);

export const RatesSchema = Type.Object(
  {
    delivery: Type.Number({ description: 'delivered / sent' }),
    open: Type.Number({ description: 'uniqueOpens / delivered' }),
    click: Type.Number({ description: 'uniqueClicks / delivered' }),
    clickToOpen: Type.Number({ description: 'uniqueClicks / uniqueOpens' }),
    bounce: Type.Number({ description: '(hardBounced + softBounced) / sent' }),
    complaint: Type.Number({ description: 'complaints / delivered' }),
    unsubscribe: Type.Number({ description: 'unsubscribes / delivered' }),
  },
  { description: 'Fractions 0–1, 4 decimals; 0 when the denominator is 0' },
);

export const exampleCounts: Record<CountName, number> = {
  sent: 1200, delivered: 1188, deferred: 9, hardBounced: 8, softBounced: 1, complaints: 0, unsubscribes: 3, opens: 702, uniqueOpens: 512,
  machineOpens: 140, clicks: 190, uniqueClicks: 131,
};
export const exampleRates = { delivery: 0.99, open: 0.431, click: 0.1103, clickToOpen: 0.2559, bounce: 0.0075, complaint: 0, unsubscribe: 0.0025 };

export const CampaignReportSchema = Type.Object({
  ...definitionProps,
  progress: Type.Object({
    recipients: Type.Integer({ description: 'Messages the campaign sends: counted when the campaign is sent, exact once the fan-out ends' }),
    queued: Type.Integer({ description: 'Messages written so far' }),
    remaining: Type.Integer({ description: 'Recipients not yet delivered, bounced or cancelled' }),
    percent: Type.Number(),
    startedAt: Nullable(Type.String({ format: 'date-time' })),
    finishedAt: Nullable(Type.String({ format: 'date-time' })),
    etaSeconds: Type.Union([Type.Integer(), Type.Null()], { description: 'At the rate so far; null when not sending' }),
  }),
  counts: Type.Intersect([
    CountsSchema,
    Type.Object({
      cancelled: Type.Integer({ description: 'Unsent messages removed by cancel' }),
      skipped: Type.Object(
        { suppressed: Type.Integer(), unsubscribed: Type.Integer(), bounced: Type.Integer(), complained: Type.Integer(), duplicate: Type.Integer() },
        { description: 'Audience members who got no message, by reason; duplicate = extra list memberships of one address' },
      ),
    }),
  ]),
  rates: RatesSchema,
  topLinks: Type.Array(Type.Object({ url: Type.String(), clicks: Type.Integer(), uniqueClicks: Type.Integer() }), { description: 'The 10 most clicked links' }),
  timeline: Type.Array(
    Type.Object({ hour: Type.String({ format: 'date-time' }), delivered: Type.Integer(), opens: Type.Integer(), clicks: Type.Integer(), bounces: Type.Integer() }),
    { description: 'Hourly buckets (UTC) with activity, oldest first' },
  ),
});

export const reportExample = {
  ...definitionExample,
  status: 'sending',
  progress: { recipients: 1200, queued: 1200, remaining: 3, percent: 99.8, startedAt: '2026-11-20T10:16:00.000Z', finishedAt: null, etaSeconds: 2 },
  counts: { ...exampleCounts, cancelled: 0, skipped: { suppressed: 4, unsubscribed: 10, bounced: 2, complained: 0, duplicate: 31 } },
  rates: exampleRates,
  topLinks: [{ url: 'https://acme.com/blog', clicks: 190, uniqueClicks: 131 }],
  timeline: [{ hour: '2026-11-20T10:00:00.000Z', delivered: 1188, opens: 702, clicks: 190, bounces: 9 }],
};

export const StateChangeSchema = Type.Object({ id: Type.String(), status: CampaignStatusSchema, sandbox: SandboxFlag });

export const RecipientSchema = Type.Object({
  subscriberId: Type.String(),
  messageId: Type.String(),
  email: Type.String(),
  status: Type.String({ description: 'queued, sending, delivered, deferred, bounced, failed, held (campaign paused)' }),
  attempts: Type.Integer(),
  lastResponse: Nullable(Type.String()),
  deliveredAt: Nullable(Type.String({ format: 'date-time' })),
  openedAt: Nullable(Type.String({ format: 'date-time' })),
  clickedAt: Nullable(Type.String({ format: 'date-time' })),
  queuedAt: Type.String({ format: 'date-time' }),
});

export const recipientExample = {
  subscriberId: 'sub_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10',
  messageId: 'msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30',
  email: 'ada@example.com',
  status: 'delivered',
  attempts: 1,
  lastResponse: '250 2.0.0 OK',
  deliveredAt: '2026-11-20T10:16:02.120Z',
  openedAt: '2026-11-20T10:20:41.003Z',
  clickedAt: null,
  queuedAt: '2026-11-20T10:16:00.412Z',
};

export const invalidStateResponse = problemResponse(
  'invalid_state: the campaign is in a state that does not allow this; `state` names it',
  'invalid_state',
  'campaign cmp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20 is sending: cannot edit it',
);

export const atRiskResponse = problemResponse(
  'invalid_state (wrong state) or account_at_risk (sending health at_risk and not acknowledged: POST /api/v1/stats/health/acknowledge)',
  'account_at_risk',
  'sending health is at_risk (bounce rate 0.12, complaint rate 0 over 7 days): acknowledge it with POST /api/v1/stats/health/acknowledge before sending campaigns',
);
