import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { deliveryStatus, type DestinationStatus } from '../../../delivery/status.js';

const Destination = Type.Object({
  name: Type.String({ description: 'The destination: a provider name (gmail, microsoft, …), `relay`, or `mx:<hosts>` — the receiving MX host set, rolled up under provider `default`' }),
  provider: Type.String(),
  source: Type.String({ description: "The sending source (IP pool); '' until sources exist" }),
  connections: Type.Integer({ description: 'Open SMTP connections, summed over the workers' }),
  inFlight: Type.Integer({ description: 'Messages being handed over now' }),
  sentLastMinute: Type.Integer({ description: 'Messages sent in the last minute (a few seconds behind)' }),
  limits: Type.Object({
    maxConnections: Type.Integer(),
    messagesPerMinute: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no per-minute limit' }),
    messagesPerConnection: Type.Integer(),
  }),
  suspendedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Set while the destination is suspended after a throttle reply' }),
  lastThrottleReply: Type.Union([Type.String(), Type.Null()], { description: "The receiver's last throttle reply, email addresses masked" }),
  lastThrottleAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  rateFactor: Type.Number({ description: 'The factor the limits are applied at: 1 at full speed, lower after a throttle' }),
});

const DeliveryStatus = Type.Object({
  generatedAt: Type.String({ format: 'date-time' }),
  data: Type.Array(Destination),
});

/**
 * A receiver's reply text can quote an address (`<someone@example.com> … try later`); the status is
 * deployment-wide, so the local part is masked to keep other tenants' recipients out of it.
 */
export function maskAddresses(reply: string): string {
  return reply.replace(/[^\s<>"'(),;:[\]]+@([A-Za-z0-9.-]+\.[A-Za-z]{2,})/g, '…@$1');
}

function publicView(d: DestinationStatus): DestinationStatus {
  return { ...d, lastThrottleReply: d.lastThrottleReply === null ? null : maskAddresses(d.lastThrottleReply) };
}

/** Traffic shaping now (docs/delivery-policy.md#who-sees-the-status): aggregates per destination, no message or recipient. */
export async function deliveryStatusRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/v1/delivery/status', {
    schema: {
      operationId: 'getDeliveryStatus',
      summary: 'Traffic shaping per destination, deployment-wide',
      description: 'Every destination (provider, relay or MX host set) with activity in the last hour, a suspension or a live connection: connections, messages in flight and sent in the last minute, the limits applied, and a suspension with the throttle reply behind it. The same figures as `postline delivery status --json` and the /metrics gauges. Deployment-wide aggregates, the same for every account; no message, recipient or account appears. See docs/delivery-policy.md.',
      tags: ['delivery'],
      response: {
        200: {
          ...DeliveryStatus,
          examples: [{
            generatedAt: '2026-11-27T04:00:00.000Z',
            data: [{
              name: 'gmail', provider: 'gmail', source: '', connections: 3, inFlight: 2, sentLastMinute: 118,
              limits: { maxConnections: 10, messagesPerMinute: 600, messagesPerConnection: 100 },
              suspendedUntil: '2026-11-27T04:05:00.000Z', lastThrottleReply: '421-4.7.28 Our system has detected an unusual rate of unsolicited mail', lastThrottleAt: '2026-11-27T03:59:58.000Z', rateFactor: 0.5,
            }],
          }],
        },
      },
    },
  }, async () => {
    const now = app.deps.clock.now();
    const rows = await deliveryStatus(app.deps.pool, app.deps.config.deliveryPolicy, now);
    return { generatedAt: now.toISOString(), data: rows.map(publicView) };
  });
}
