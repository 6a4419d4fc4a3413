/**
 * What traffic shaping is doing now, deployment-wide: every destination with activity in the
 * last hour, a suspension or a live lease, with the figures summed over the workers. Read by
 * `postline delivery status`, the /metrics gauges and the dashboard's deliverability page.
 */
import type { Queryable } from '../db/pool.js';
import { selectDestinationStatus, type DestinationStatusRow } from '../db/queries/shaping.js';
import type { DeliveryPolicy, ProviderPolicy } from '../delivery-policy.js';

export interface DestinationStatus {
  /** The destination: a provider's name, `relay`, or `mx:<hosts>` rolled up under `default`. */
  name: string;
  provider: string;
  /** The sending source (IP pool); '' until sources exist. */
  source: string;
  connections: number;
  inFlight: number;
  /** Messages sent in the last minute (from the workers' reports, a few seconds behind). */
  sentLastMinute: number;
  limits: { maxConnections: number; messagesPerMinute: number | null; messagesPerConnection: number };
  suspendedUntil: string | null;
  lastThrottleReply: string | null;
  lastThrottleAt: string | null;
  /** The AIMD factor the limits are applied at: 1 at full speed, lower after a throttle. */
  rateFactor: number;
}

const ACTIVE_WITHIN_MS = 3_600_000;

export function policyOf(policy: DeliveryPolicy, row: Pick<DestinationStatusRow, 'destination' | 'provider'>): ProviderPolicy {
  if (row.destination === 'relay') return policy.relay;
  return policy.providers.find((p) => p.name === row.provider) ?? policy.default;
}

/** Two fixed minutes read as a sliding one: this minute's count, and the part of the last one still inside the window. */
export function sentLastMinute(row: Pick<DestinationStatusRow, 'minute_start' | 'minute_sent' | 'prev_minute_sent'>, now: Date): number {
  if (!row.minute_start) return 0;
  const age = (now.getTime() - row.minute_start.getTime()) / 60_000;
  if (age >= 2) return 0;
  if (age >= 1) return Math.round(row.minute_sent * (2 - age));
  return Math.round(row.minute_sent + row.prev_minute_sent * (1 - age));
}

export async function deliveryStatus(db: Queryable, policy: DeliveryPolicy, now: Date): Promise<DestinationStatus[]> {
  const rows = await selectDestinationStatus(db, now, ACTIVE_WITHIN_MS);
  return rows.map((r) => {
    const p = policyOf(policy, r);
    const suspended = r.suspended_until && r.suspended_until > now ? r.suspended_until.toISOString() : null;
    return {
      name: r.destination,
      provider: r.destination === 'relay' ? 'relay' : p.name,
      source: r.source,
      connections: r.connections,
      inFlight: r.in_flight,
      sentLastMinute: sentLastMinute(r, now),
      limits: { maxConnections: p.maxConnections, messagesPerMinute: p.messagesPerMinute, messagesPerConnection: p.messagesPerConnection },
      suspendedUntil: suspended,
      lastThrottleReply: r.last_throttle_reply,
      lastThrottleAt: r.last_throttle_at?.toISOString() ?? null,
      rateFactor: Math.round(r.rate_factor * 100) / 100,
    };
  });
}
