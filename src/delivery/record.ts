/**
 * The record step of delivery: the outcomes that finished together, written at once — each
 * message's new state, its event and the source it left from, the messages handed back untried
 * released from this worker's claim — and, for the outcomes that call for more, in the same
 * transaction: the suppressions a bounce calls for, the campaign a deferral may settle, the TLS
 * sessions for the domain's TLS report.
 */
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { settleStrayDeferrals } from '../db/queries/campaigns/campaigns.js';
import { suppressAddress } from '../domain/audience/address-status.js';
import { countsTowardPersistence, suppressIfPersistentlySoft } from '../domain/bounces/persistent.js';
import { recordTlsSessions, type TlsSession } from '../domain/tls-reports.js';
import { newId } from '../ids.js';
import type { Source } from '../sending-identity.js';
import type { PlannedOutcome } from './outcome.js';
import { recordOutcomes } from './queue.js';

/** A claimed message handed back untried: shaping had no room for it now. */
export interface Released {
  release: { id: string; nextAttemptAt: Date };
}
/** An attempt's outcome, with the source it left from and the TLS sessions judged against the domain's MTA-STS policy. */
export type Attempted = PlannedOutcome & { source?: Source; tls?: Omit<TlsSession, 'at'>[] };
export type Step = Attempted | Released;

/** Whether an outcome needs writes beyond its message, event and source. */
function needsMore(p: Attempted): boolean {
  return p.outcome.status === 'deferred' || p.suppress || countsTowardPersistence(p.bounce) || (p.tls?.length ?? 0) > 0;
}

/**
 * Writes `steps`. Outcomes of messages whose claim this worker lost are left alone. The usual
 * group (deliveries, releases) is one statement, atomic by itself; a group with anything more
 * to write is one transaction.
 */
export async function recordSteps(pool: Pool, workerId: string, now: Date, steps: Step[]): Promise<void> {
  const planned = steps.filter((s): s is Attempted => !('release' in s));
  const released = steps.filter((s): s is Released => 'release' in s).map((s) => s.release);
  if (!planned.some(needsMore)) {
    await recordMain(pool, workerId, released, planned);
    return;
  }
  await withTransaction(pool, async (tx) => {
    const updated = await recordMain(tx, workerId, released, planned);
    const mine = planned.filter((p) => updated.has(p.outcome.id));
    await settleStrayDeferrals(tx, mine.filter((p) => p.outcome.status === 'deferred').map((p) => p.outcome.id));
    // TLS sessions happened whoever records the outcome: counted for the domain's TLS report.
    await recordTlsSessions(tx, planned.flatMap((p) => (p.tls ?? []).map((t) => ({ ...t, at: now }))));
    for (const p of mine) {
      if (p.suppress) await suppressAddress(tx, p.event.accountId, p.event.email, 'hard_bounce', p.event.occurredAt, p.outcome.response, p.bounce?.reason);
      else if (countsTowardPersistence(p.bounce)) await suppressIfPersistentlySoft(tx, p.event.accountId, p.event.email, p.event.occurredAt);
    }
  });
}

/** Releases, new states, sources and events in one statement; returns the ids this worker still held. */
function recordMain(db: Queryable, workerId: string, released: Released['release'][], planned: Attempted[]): Promise<Set<string>> {
  return recordOutcomes(db, workerId, released, planned.map((p) => ({
    outcome: p.outcome,
    source: p.source ? { name: p.source.name, address: p.source.address } : null,
    event: { id: newId('evt'), accountId: p.event.accountId, type: p.event.type, email: p.event.email, data: p.event.data ?? {}, occurredAt: p.event.occurredAt },
  })));
}
