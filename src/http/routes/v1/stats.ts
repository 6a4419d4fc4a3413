import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { acknowledgeHealth, evaluateHealth, HEALTH_RULES } from '../../../domain/stats/account-health.js';
import { accountStats } from '../../../domain/stats/stats.js';
import { inTransaction } from '../../account-write.js';
import { invalidResponse, SandboxFlag } from './common-schemas.js';
import { CountsSchema, exampleCounts, exampleRates, RatesSchema } from './campaign-schemas.js';

const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('warning'), Type.Literal('at_risk')]),
  bounceRate: Type.Number({ description: 'hardBounced / sent over the window' }),
  complaintRate: Type.Number({ description: 'complaints / delivered over the window' }),
  senderSideRate: Type.Number({ description: 'sender-side bounces / sent over the window (by reason: GET /api/v1/account/health)' }),
  sent: Type.Integer({ description: 'Messages sent in the window; below thresholds.minSent the status is ok' }),
  windowDays: Type.Integer(),
  thresholds: Type.Object({
    windowDays: Type.Integer(),
    minSent: Type.Integer(),
    bounce: Type.Object({ warning: Type.Number(), atRisk: Type.Number() }),
    complaint: Type.Object({ warning: Type.Number(), atRisk: Type.Number() }),
    senderSide: Type.Object({ warning: Type.Number(), atRisk: Type.Number() }),
  }),
  atRiskSince: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  acknowledgedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  sendingBlocked: Type.Boolean({ description: 'at_risk and not acknowledged: campaign send/resume answer 409 account_at_risk' }),
  sandbox: SandboxFlag,
});

const healthExample = {
  status: 'warning', bounceRate: 0.061, complaintRate: 0.0004, senderSideRate: 0.003, sent: 5210, windowDays: 7, thresholds: HEALTH_RULES,
  atRiskSince: null, acknowledgedAt: null, sendingBlocked: false,
};

const StatsSchema = Type.Object({
  from: Type.String({ format: 'date', description: 'First UTC day (inclusive)' }),
  to: Type.String({ format: 'date', description: 'Last UTC day (inclusive)' }),
  filter: Type.Object({ tag: Type.Union([Type.String(), Type.Null()]), campaignId: Type.Union([Type.String(), Type.Null()]) }),
  counts: CountsSchema,
  rates: RatesSchema,
  quota: Type.Object({
    used: Type.Integer({ description: 'Messages accepted this calendar month (UTC)' }),
    limit: Type.Union([Type.Integer(), Type.Null()], { description: 'Monthly quota; null = unlimited' }),
    resetsAt: Type.String({ format: 'date-time' }),
  }),
  daily: Type.Array(Type.Intersect([Type.Object({ date: Type.String({ format: 'date' }) }), CountsSchema]), { description: 'One entry per day of the range, zeros included' }),
  health: HealthSchema,
});

const statsExample = {
  from: '2026-10-25',
  to: '2026-11-23',
  filter: { tag: null, campaignId: null },
  counts: exampleCounts,
  rates: exampleRates,
  quota: { used: 18250, limit: 50000, resetsAt: '2026-12-01T00:00:00.000Z' },
  daily: [{ date: '2026-10-25', ...exampleCounts }],
  health: healthExample,
};

/** GET /api/v1/stats and the health acknowledgement (docs/stats.md). */
export async function statsRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;

  app.get('/api/v1/stats', {
    schema: {
      operationId: 'getStats',
      summary: 'Account statistics',
      description:
        'Counts and rates of the account (transactional and campaigns) between two UTC days (default: the last 30 days), for everything, ' +
        'one `tag` or one `campaignId`; the monthly quota; a daily series; and the sending health (ok / warning / at_risk). ' +
        'Read from counters maintained as events happen.',
      tags: ['stats'],
      querystring: Type.Object({
        from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 date or date-time; its UTC day is the first of the range' })),
        to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 date or date-time (default now); its UTC day is the last' })),
        tag: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\x00-\\x1f]*$' })),
        campaignId: Type.Optional(Type.String({ maxLength: 64 })),
      }),
      response: { 200: { ...StatsSchema, examples: [statsExample] }, 422: invalidResponse('validation_failed: a bad date, a range over 366 days, an unknown campaign, tag and campaignId together', 'from', 'must not be after to') },
    },
  }, async (request) =>
    accountStats(pool, request.auth.accountId, request.query, clock.now(), request.auth.monthlyQuota, { record: request.auth.mode !== 'test' }));

  app.post('/api/v1/stats/health/acknowledge', {
    schema: {
      operationId: 'acknowledgeHealth',
      summary: 'Acknowledge an at-risk sending health',
      description:
        'While the health is `at_risk`, campaigns pause and send/resume answer 409 `account_at_risk`. Acknowledging (after fixing the list) lets ' +
        'campaigns send again for the rest of this at-risk episode; a new episode (after the rates fell back and rose again) needs a new acknowledgement. ' +
        'Test key: answers the health as it is, acknowledges nothing.',
      tags: ['stats'],
      response: { 200: { ...HealthSchema, examples: [{ ...healthExample, status: 'at_risk', bounceRate: 0.12, atRiskSince: '2026-11-23T09:00:00.000Z', acknowledgedAt: '2026-11-23T09:30:00.000Z' }] } },
    },
  }, async (request) => {
    const { accountId, mode } = request.auth;
    if (mode === 'test') return { ...(await evaluateHealth(pool, accountId, clock.now(), { record: false })), sandbox: true };
    return inTransaction(pool, (tx) => acknowledgeHealth(tx, accountId, clock.now()));
  });
}
