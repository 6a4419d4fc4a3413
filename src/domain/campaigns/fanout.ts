import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Pool, PoolClient, Queryable } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { notifySoon } from '../../db/notify.js';
import { lockCampaign, type CampaignRow } from '../../db/queries/campaigns/campaigns.js';
import {
  advanceFanOut, claimFanOut, insertCampaignMessages, selectRecipientBatch,
  type BatchProgress, type CampaignMessage, type RecipientCandidate,
} from '../../db/queries/campaigns/fanout.js';
import { newId } from '../../ids.js';
import { compileTemplate, renderTemplate, type Template } from '../../templates/index.js';
import { monthOf } from '../sending/sending.js';
import { audienceFilter, countRecipients } from './audience.js';
import { pauseLocked, throttleInterval } from './lifecycle.js';

/**
 * The fan-out: a sending campaign's audience turned into messages, batch by batch, in
 * subscriber id order. Each batch — its messages, their `sent` events, the advanced checkpoint
 * and the skip counters — commits in one transaction, under the campaign's row lock and a
 * lease, so a process killed at any point leaves either a whole batch or none of it, and the
 * next claimer resumes after the last committed subscriber. docs/decisions/0012 says why this
 * is a job row rather than a graphile-worker job.
 */

export const FANOUT_BATCH = 1000;
export const FANOUT_LEASE_MS = 60_000;

export interface FanOutDeps {
  pool: Pool;
  now: () => Date;
  /** Monthly quota of an account, or null for none. */
  quotaOf: (accountId: string) => Promise<number | null>;
  batchSize?: number;
  workerId?: string;
  /** Called after each committed batch (progress output of tools and tests). */
  onBatch?: (campaignId: string, inserted: number) => void;
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
 * Claims one campaign and fans it out to the end (or until it is paused, cancelled, out of
 * quota, or its lease is lost). Returns the number of messages written, or null when no
 * campaign needed a fan-out.
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
  const claimed = await claimFanOut(deps.pool, workerId, deps.now(), FANOUT_LEASE_MS);
  if (!claimed) return null;
  if (claimed.audience_size === null) await countRecipients(deps.pool, claimed, deps.now());
  const subject = compileTemplate(claimed.subject ?? '');
  let written = 0;
  let next: Promise<PlannedBatch> | null = null;
  for (;;) {
    const prepared: Promise<PlannedBatch> | null = next;
    const r: BatchResult = await withTransaction(deps.pool, (tx) => fanOutBatch(tx, deps, workerId, claimed.id, claimed.account_id, subject, prepared));
    next = r.next;
    written += r.inserted;
    deps.onBatch?.(claimed.id, r.inserted);
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
  /** Subscribers read: fewer than `limit` means the audience ends with this batch. */
  size: number;
  lastSubscriberId: string;
  msgs: Omit<CampaignMessage, 'nextAttemptAt'>[];
  skipped: Skipped;
}

/** Reads the `limit` subscribers after `after` and decides each one's message or skip reason. */
export async function planBatch(db: Queryable, c: CampaignRow, subject: Template, after: string, limit: number, now: Date): Promise<PlannedBatch> {
  const batch = await selectRecipientBatch(db, await audienceFilter(db, c, now), c.audience.lists, after, limit);
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
      subject: renderTemplate(subject, { ...c.variables, subscriber }, 'subject'),
      mergeData: { subscriber },
    });
  }
  return { after, limit, size: batch.length, lastSubscriberId: batch.length > 0 ? batch[batch.length - 1].id : after, msgs, skipped };
}

/**
 * One batch, in the caller's transaction. `more` is false when the fan-out must stop; `next`
 * is the following batch, being read meanwhile (null when there is none).
 */
export async function fanOutBatch(
  tx: PoolClient,
  deps: FanOutDeps,
  workerId: string,
  campaignId: string,
  accountId: string,
  subject: Template,
  prepared: Promise<PlannedBatch> | null = null,
): Promise<BatchResult> {
  const c = await lockCampaign(tx, accountId, campaignId);
  if (!c || c.status !== 'sending' || c.fanout_done || c.locked_by !== workerId) return { inserted: 0, more: false, next: null };
  const now = deps.now();
  const limit = deps.batchSize ?? FANOUT_BATCH;
  const after = c.last_subscriber_id ?? '';
  let plan = prepared ? await prepared.catch(() => null) : null;
  if (!plan || plan.after !== after || plan.limit !== limit) plan = await planBatch(tx, c, subject, after, limit, now);
  const done = plan.size < limit;
  const next = done ? null : planBatch(deps.pool, c, subject, plan.lastSubscriberId, limit, now);
  next?.catch(() => {}); // a failed read is read again in the next transaction
  const interval = throttleInterval(c.throttle);
  let slot = Math.max(now.getTime(), c.throttle_next_at?.getTime() ?? 0);
  const msgs: CampaignMessage[] = plan.msgs.map((m) => {
    const at = new Date(slot);
    slot += interval;
    return { ...m, nextAttemptAt: at };
  });
  const quota = await deps.quotaOf(accountId);
  const stored = await insertCampaignMessages(tx, c, msgs, now, quota === null ? null : { month: monthOf(now), limit: quota });
  if (!stored.ok) {
    await pauseLocked(tx, c, now, 'quota_exceeded');
    return { inserted: 0, more: false, next };
  }
  const advanced = await advanceFanOut(tx, c.id, workerId, {
    lastSubscriberId: plan.lastSubscriberId,
    queued: stored.inserted,
    skipped: plan.skipped,
    done,
    throttleNextAt: interval > 0 ? new Date(slot) : null,
    leaseUntil: new Date(now.getTime() + FANOUT_LEASE_MS),
  });
  if (!advanced) throw new Error(`fan-out of ${c.id} lost its lease`);
  return { inserted: stored.inserted, more: !done, next };
}
