/**
 * The record step of delivery: the outcomes that finished together, written in one
 * transaction — each message's new state, its events, the suppressions a bounce calls for, the
 * source it left from, the TLS sessions for the domain's TLS report — and the messages handed
 * back untried released from this worker's claim.
 */
import type { PoolClient } from '../db/pool.js';
import { settleStrayDeferrals } from '../db/queries/campaigns/campaigns.js';
import { recordMessageSources } from '../db/queries/messages.js';
import { suppressAddress } from '../domain/audience/address-status.js';
import { countsTowardPersistence, suppressIfPersistentlySoft } from '../domain/bounces/persistent.js';
import { recordEvents } from '../domain/events.js';
import { recordTlsSessions, type TlsSession } from '../domain/tls-reports.js';
import type { Source } from '../sending-identity.js';
import type { PlannedOutcome } from './outcome.js';
import { completeMessages, releaseClaims } from './queue.js';

/** A claimed message handed back untried: shaping had no room for it now. */
export interface Released {
  release: { id: string; nextAttemptAt: Date };
}
/** An attempt's outcome, with the source it left from and the TLS sessions judged against the domain's MTA-STS policy. */
export type Attempted = PlannedOutcome & { source?: Source; tls?: Omit<TlsSession, 'at'>[] };
export type Step = Attempted | Released;

/** Writes `steps` inside `tx`. Outcomes of messages whose claim this worker lost are left alone. */
export async function recordSteps(tx: PoolClient, workerId: string, now: Date, steps: Step[]): Promise<void> {
  const planned = steps.filter((s): s is Attempted => !('release' in s));
  const released = steps.filter((s): s is Released => 'release' in s).map((s) => s.release);
  await releaseClaims(tx, workerId, released);
  const updated = await completeMessages(tx, workerId, planned.map((p) => p.outcome));
  const mine = planned.filter((p) => updated.has(p.outcome.id));
  await recordEvents(tx, mine.map((p) => p.event));
  await settleStrayDeferrals(tx, mine.filter((p) => p.outcome.status === 'deferred').map((p) => p.outcome.id));
  await recordMessageSources(tx, mine.flatMap((p) => (p.source ? [{ id: p.outcome.id, name: p.source.name, address: p.source.address }] : [])));
  // TLS sessions happened whoever records the outcome: counted for the domain's TLS report.
  await recordTlsSessions(tx, planned.flatMap((p) => (p.tls ?? []).map((t) => ({ ...t, at: now }))));
  for (const p of mine) {
    if (p.suppress) await suppressAddress(tx, p.event.accountId, p.event.email, 'hard_bounce', p.event.occurredAt, p.outcome.response, p.bounce?.reason);
    else if (countsTowardPersistence(p.bounce)) await suppressIfPersistentlySoft(tx, p.event.accountId, p.event.email, p.event.occurredAt);
  }
}
