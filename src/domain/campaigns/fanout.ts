import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Pool, PoolClient, Queryable } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { notifySoon } from '../../db/notify.js';
import { lockCampaign, selectCampaign, type CampaignRow } from '../../db/queries/campaigns/campaigns.js';
import {
  advanceFanOut, claimFanOutPart, hasFanOutParts, insertCampaignMessages, insertFanOutParts, lockCampaignForAdvance, lockUnsplitCampaign,
  selectRecipientBatch, type BatchProgress, type CampaignMessage, type FanOutPart, type RecipientCandidate,
} from '../../db/queries/campaigns/fanout.js';
import { newId } from '../../ids.js';
import { compileTemplate, renderTemplate, type Template } from '../../templates/index.js';
import { monthOf } from '../sending/sending.js';
import { audienceFilter, countRecipients } from './audience.js';
import { mergeVariables } from './definition.js';
import { pauseLocked, throttleInterval } from './lifecycle.js';

/**
 * The fan-out: a sending campaign's audience turned into messages, batch by batch, in
 * subscriber id order. When it starts, the audience is split into parts (ranges of subscriber
 * ids, FANOUT_PARTS at most) so that several workers fan one campaign out at once; each part is
 * a job of its own with a lease and a checkpoint. Each batch — its messages, their `sent`
 * events, the part's advanced checkpoint and the campaign's counters — commits in one
 * transaction, so a process killed at any point leaves either a whole batch or none of it, and
 * the next claimer of the part resumes after its last committed subscriber.
 * docs/decisions/0012 says why this is a job row rather than a graphile-worker job, 0019 why in
 * parts.
 */

export const FANOUT_BATCH = 1000;
export const FANOUT_LEASE_MS = 60_000;
/** Parts a fan-out is split into at most (a power of two: smaller audiences get half as many). */
export const FANOUT_PARTS = 4;
/** Batches a part has at least: a smaller audience is split into fewer parts. */
const BATCHES_PER_PART = 5;

export interface FanOutDeps {
  pool: Pool;
  now: () => Date;
  /** Monthly quota of an account, or null for none. */
  quotaOf: (accountId: string) => Promise<number | null>;
  batchSize?: number;
  workerId?: string;
  /** Called after each committed batch (progress output of tools and tests). */
  onBatch?: (campaignId: string, inserted: number) => void;
  /**
   * Called with true when a part is claimed, and by runCampaignStep with false once it has no
   * part left to claim (the worker lowers its delivery meanwhile).
   */
  onFanOut?: (running: boolean) => void;
}

export type SkipReason = 'suppressed' | 'unsubscribed' | 'bounced' | 'complained';

/** Why a candidate gets no message, or null when it gets one. */
export function skipReason(c: Pick<RecipientCandidate, 'status' | 'suppression'>): SkipReason | null {
  if (c.status === 'unsubscribed') return 'unsubscribed';
  if (c.status === 'bounced') return 'bounced';
  if (c.status === 'complained') return 'complained';
  if (c.suppression === 'unsubscribe') return 'unsubscribed';
  if (c.suppression === 'hard_bounce') return 'bounced';
  if (c.suppression === 'complaint') return 'complained';
  if (c.suppression !== null) return 'suppressed';
  return null;
}

const workerIdOf = () => `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/**
 * Claims one part of a fan-out (splitting a campaign that starts its fan-out first) and fans
 * it out to its end, or until the campaign is paused, cancelled or out of quota, or the lease is
 * lost. Returns the number of messages written, or null when nothing needed a fan-out.
 *
 * Pipelined: while one batch is written, the next is read and prepared on another connection
 * (docs/benchmarks.md: reading and preparing were a quarter of a batch's time). The prepared
 * batch is used only if it starts at the checkpoint the previous batch committed; otherwise it
 * is read again inside the transaction. It is read outside the batch's transaction, which
 * changes nothing for exactness (the checkpoint and the unique index decide that) and nothing
 * for who is in the audience: the in-transaction read did not lock subscribers either.
 */
export async function runFanOut(deps: FanOutDeps): Promise<number | null> {
  const workerId = deps.workerId ?? workerIdOf();
  let claimed = await claimFanOutPart(deps.pool, workerId, deps.now(), FANOUT_LEASE_MS);
  if (!claimed) {
    if (!(await splitFanOut(deps))) return null;
    claimed = await claimFanOutPart(deps.pool, workerId, deps.now(), FANOUT_LEASE_MS);
    if (!claimed) return 0; // the other workers took every part
  }
  deps.onFanOut?.(true);
  return fanOutPart(deps, workerId, claimed);
}

async function fanOutPart(deps: FanOutDeps, workerId: string, claimed: FanOutPart): Promise<number> {
  const c = await selectCampaign(deps.pool, claimed.account_id, claimed.campaign_id);
  if (c?.status !== 'sending') return 0;
  const part: PartState = { part: claimed.part, upto: claimed.upto_id, after: claimed.last_subscriber_id, throttleNextAt: c.throttle_next_at };
  const subject = compileTemplate(c.subject ?? '');
  let written = 0;
  let next: Promise<PlannedBatch> | null = null;
  for (;;) {
    const prepared: Promise<PlannedBatch> | null = next;
    let r: BatchResult;
    try {
      r = await withTransaction(deps.pool, (tx) => fanOutBatch(tx, deps, workerId, c, part, subject, prepared));
    } catch (err) {
      if (!(err instanceof FanOutStopped)) throw err;
      r = { inserted: 0, more: false, next: null };
    }
    next = r.next;
    written += r.inserted;
    deps.onBatch?.(c.id, r.inserted);
    if (r.inserted > 0) {
      notifySoon(deps.pool, 'postline_messages');
      notifySoon(deps.pool, 'postline_events');
    }
    if (!r.more) {
      // A read still under way finishes before the caller may close the pool.
      await Promise.all([prepared?.catch(() => null), next?.catch(() => null)]);
      return written;
    }
  }
}

/**
 * Splits the fan-out of one sending campaign that has no parts yet: counts its audience
 * (progress) and writes its parts, then wakes the other workers to claim them. False when no
 * campaign needed it.
 */
export async function splitFanOut(deps: FanOutDeps): Promise<boolean> {
  const split = await withTransaction(deps.pool, async (tx) => {
    const locked = await lockUnsplitCampaign(tx);
    if (!locked) return false;
    const c = await selectCampaign(tx, locked.account_id, locked.id);
    // Split by another worker that committed after the lock's snapshot: nothing to do here.
    if (!c || (await hasFanOutParts(tx, c.id))) return true;
    const size = await countRecipients(tx, c, deps.now(), FANOUT_PARTS);
    await insertFanOutParts(tx, c.id, pickBounds(size.bounds, partsFor(size.eligible, deps.batchSize ?? FANOUT_BATCH, c.throttle !== null)));
    return true;
  });
  if (split) notifySoon(deps.pool, 'postline_campaigns');
  return split;
}

/**
 * How many parts an audience is fanned out in. A throttled campaign gets one: its delivery
 * slots are handed out one after the other from the campaign's next free slot, and its pace is
 * the throttle's anyway.
 */
export function partsFor(eligible: number, batchSize: number, throttled: boolean): number {
  if (throttled) return 1;
  let parts = FANOUT_PARTS;
  while (parts > 1 && eligible < parts * batchSize * BATCHES_PER_PART) parts /= 2;
  return parts;
}

/**
 * Of the FANOUT_PARTS - 1 bounds that split the audience evenly, those that split it into
 * `parts`; distinct (a tiny audience repeats ids) and ascending, as the parts' ranges need.
 */
function pickBounds(bounds: string[], parts: number): string[] {
  const step = FANOUT_PARTS / parts;
  return [...new Set(bounds.filter((b, i) => b !== null && (i + 1) % step === 0))].sort();
}

/** The campaign stopped sending (paused, cancelled) or was paused and resumed meanwhile: the batch is rolled back. */
class FanOutStopped extends Error {}

/** The part being fanned out, as of its last committed batch. */
export interface PartState {
  part: number;
  /** Its last subscriber id; null = to the end of the audience. */
  upto: string | null;
  /** Its checkpoint. */
  after: string;
  /** The campaign's next free delivery slot under its throttle. */
  throttleNextAt: Date | null;
}

type Skipped = BatchProgress['skipped'];

interface BatchResult {
  inserted: number;
  more: boolean;
  next: Promise<PlannedBatch> | null;
}

/** A batch read and turned into messages, not yet written (delivery times are set when it is). */
export interface PlannedBatch {
  /** The checkpoint it continues from. */
  after: string;
  limit: number;
  /** Subscribers read: fewer than `limit` means the part ends with this batch. */
  size: number;
  lastSubscriberId: string;
  msgs: Omit<CampaignMessage, 'nextAttemptAt'>[];
  skipped: Skipped;
}

/** Reads the `limit` subscribers after `after` (up to `upto`) and decides each one's message or skip reason. */
export async function planBatch(db: Queryable, c: CampaignRow, subject: Template, after: string, upto: string | null, limit: number, now: Date): Promise<PlannedBatch> {
  const batch = await selectRecipientBatch(db, await audienceFilter(db, c, now), c.audience.lists, after, upto, limit);
  const skipped: Skipped = { suppressed: 0, unsubscribed: 0, bounced: 0, complained: 0, duplicate: 0 };
  const msgs: PlannedBatch['msgs'] = [];
  for (const s of batch) {
    skipped.duplicate += Math.max(0, s.memberships - 1);
    const reason = skipReason(s);
    if (reason) {
      skipped[reason]++;
      continue;
    }
    const subscriber = { id: s.id, email: s.email, name: s.name, attributes: s.attributes };
    msgs.push({
      id: newId('msg'),
      eventId: newId('evt'),
      subscriberId: s.id,
      email: s.email,
      toDomain: s.email_key.slice(s.email_key.lastIndexOf('@') + 1),
      subject: renderTemplate(subject, mergeVariables(c.variables, subscriber, ''), 'subject'),
      mergeData: { subscriber },
    });
  }
  return { after, limit, size: batch.length, lastSubscriberId: batch.length > 0 ? batch[batch.length - 1].id : after, msgs, skipped };
}

/**
 * One batch of a part, in the caller's transaction; on commit, `part` is advanced. `more` is
 * false when the part is finished or the fan-out must stop; `next` is the following batch,
 * being read meanwhile (null when there is none). Throws FanOutStopped when the campaign was
 * paused or cancelled while the batch was written (the caller rolls it back).
 */
export async function fanOutBatch(
  tx: PoolClient,
  deps: FanOutDeps,
  workerId: string,
  c: CampaignRow,
  part: PartState,
  subject: Template,
  prepared: Promise<PlannedBatch> | null = null,
): Promise<BatchResult> {
  const now = deps.now();
  const limit = deps.batchSize ?? FANOUT_BATCH;
  let plan = prepared ? await prepared.catch(() => null) : null;
  if (!plan || plan.after !== part.after || plan.limit !== limit) plan = await planBatch(tx, c, subject, part.after, part.upto, limit, now);
  const done = plan.size < limit;
  const next = done ? null : planBatch(deps.pool, c, subject, plan.lastSubscriberId, part.upto, limit, now);
  next?.catch(() => {}); // a failed read is read again in the next transaction
  const interval = throttleInterval(c.throttle);
  let slot = Math.max(now.getTime(), part.throttleNextAt?.getTime() ?? 0);
  const msgs: CampaignMessage[] = plan.msgs.map((m) => {
    const at = new Date(slot);
    slot += interval;
    return { ...m, nextAttemptAt: at };
  });
  const quota = await deps.quotaOf(c.account_id);
  const stored = await insertCampaignMessages(tx, c, msgs, now, quota === null ? null : { month: monthOf(now), limit: quota });
  if (!stored.ok) {
    const row = await lockCampaign(tx, c.account_id, c.id);
    if (row?.status === 'sending') await pauseLocked(tx, row, now, 'quota_exceeded');
    return { inserted: 0, more: false, next };
  }
  // The campaign row is locked only now, for the advance: the parts' batches are written side
  // by side and queue only here. A pause or cancel committed meanwhile rolls the batch back (a
  // later one holds or removes what it wrote); so does a pause and resume, when the throttle's
  // slots handed out above may overlap the ones the resume handed out.
  const locked = await lockCampaignForAdvance(tx, c.id);
  if (locked?.status !== 'sending' || (interval > 0 && locked.throttle_next_at?.getTime() !== part.throttleNextAt?.getTime())) throw new FanOutStopped();
  const throttleNextAt = interval > 0 ? new Date(slot) : null;
  const advanced = await advanceFanOut(tx, c.id, workerId, {
    part: part.part,
    after: part.after,
    lastSubscriberId: plan.lastSubscriberId,
    queued: stored.inserted,
    skipped: plan.skipped,
    done,
    throttleNextAt,
    leaseUntil: new Date(now.getTime() + FANOUT_LEASE_MS),
  });
  if (!advanced) throw new Error(`fan-out of ${c.id} part ${part.part} lost its lease`);
  // Set before the commit: if the commit fails, the error ends runFanOut and this state is dropped.
  part.after = plan.lastSubscriberId;
  part.throttleNextAt = throttleNextAt;
  return { inserted: stored.inserted, more: !done, next };
}
