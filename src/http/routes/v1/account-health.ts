import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { deliverabilityHealth } from '../../../domain/stats/account-health.js';

const Issue = Type.Object({ code: Type.String({ description: 'sender_side_bounces, hard_bounces or complaints' }), message: Type.String() });
const Health = Type.Object({
  windowDays: Type.Integer(),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  sent: Type.Integer(),
  delivered: Type.Integer(),
  hardBounces: Type.Integer({ description: 'Dead addresses, suppressed' }),
  softBounces: Type.Integer({ description: 'Other final failures, any side' }),
  complaints: Type.Integer(),
  senderSide: Type.Object(
    { total: Type.Integer(), rate: Type.Number(), byReason: Type.Record(Type.String(), Type.Integer()) },
    { description: 'Failures on our side (blocked, spam_detected, auth_failure, …): they never suppress a recipient' },
  ),
  hardBounceRate: Type.Number(),
  complaintRate: Type.Number(),
  status: Type.Union([Type.Literal('ok'), Type.Literal('warning'), Type.Literal('critical')]),
  issues: Type.Array(Issue),
});

export async function accountHealthRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/v1/account/health', {
    schema: {
      operationId: 'getAccountHealth',
      summary: 'Sending health of the account',
      description: 'Outcomes of the last `days` UTC days (default 7, today included): sent, delivered, bounces, complaints, and the sender-side bounces (receivers refusing our IP, authentication or content) that never suppress a recipient and show here instead, with a status and the issues behind it. The same health as `health` in GET /api/v1/stats (`critical` there is `at_risk`). See docs/bounces.md#account-health.',
      tags: ['account'],
      querystring: Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 7 })) }, { additionalProperties: false }),
      response: {
        200: {
          ...Health,
          examples: [{
            windowDays: 7, from: '2026-11-17T00:00:00.000Z', to: '2026-11-23T10:00:00.000Z', sent: 1200, delivered: 1150, hardBounces: 12, softBounces: 38, complaints: 0,
            senderSide: { total: 30, rate: 0.025, byReason: { blocked: 22, auth_failure: 8 } }, hardBounceRate: 0.01, complaintRate: 0, status: 'warning',
            issues: [{ code: 'sender_side_bounces', message: 'receivers refused our mail (blocked, auth_failure): 2.50 % of sent mail in the last 7 days (warning at 2.0 %)' }],
          }],
        },
      },
    },
  }, async (request) => {
    const { days } = request.query;
    return deliverabilityHealth(app.deps.pool, request.auth.accountId, app.deps.clock.now(), days ?? 7);
  });
}
