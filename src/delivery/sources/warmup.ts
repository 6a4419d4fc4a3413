/**
 * Warm-up of new source addresses (docs/sending-identity.md#warm-up): receivers distrust an
 * address that starts sending at full volume, so a source may carry a plan — at most
 * `daily[0]` messages per provider on its first UTC day, `daily[1]` on the second, … and no
 * cap after the last. What does not fit waits for the next day or, with `overflow: "spill"`,
 * leaves from a warmed source of the same pool. Pure: time comes in as `now`, counts as a
 * function; the cap is enforced across workers by reserveWarmupSend (db/queries/warmup.ts).
 */
import { createHash } from 'node:crypto';
import type { Source, WarmupPlan } from '../../sending-identity.js';

const DAY_MS = 86_400_000;

export interface WarmupStatus {
  /** 1 on the plan's start day; 0 or less before it; null without a plan. */
  day: number | null;
  /** Most messages per provider today; null: no cap (no plan, or past its last day). 0 before the start. */
  cap: number | null;
}

const dayStart = (d: Date) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());

/** The plan's day number at `now`: 1 on `start`, 2 the next UTC day, … (0 the day before). */
export function warmupDayOf(plan: WarmupPlan, now: Date): number {
  return Math.round((dayStart(now) - Date.parse(`${plan.start}T00:00:00Z`)) / DAY_MS) + 1;
}

export function warmupStatus(source: Pick<Source, 'warmup'>, now: Date): WarmupStatus {
  if (!source.warmup) return { day: null, cap: null };
  const day = warmupDayOf(source.warmup, now);
  if (day < 1) return { day, cap: 0 };
  return { day, cap: day <= source.warmup.daily.length ? source.warmup.daily[day - 1] : null };
}

export const isWarmed = (source: Pick<Source, 'warmup'>, now: Date) => warmupStatus(source, now).cap === null;

/** The next UTC midnight after `now`: when a new day's caps begin. */
export function nextUtcDay(now: Date): Date {
  return new Date(dayStart(now) + DAY_MS);
}

/** A message's source in its pool: spread evenly and stable per message (a retry keeps its address, as greylisting wants). */
export function assignSource(pool: Source[], messageId: string): Source {
  const n = createHash('sha1').update(messageId).digest().readUInt32BE(0);
  return pool[n % pool.length];
}

export type SourceDecision =
  | { kind: 'send'; source: Source; spilled: boolean }
  | { kind: 'wait'; until: Date; reason: string };

/**
 * Where a message goes once its assigned source's cap for the provider is reached: a warmed
 * source of the pool when the assigned one spills (spread over them by message, as
 * assignSource does), else the next UTC day (or the plan's first day).
 */
export function overflowFrom(assigned: Source, pool: Source[], now: Date, messageId: string): SourceDecision {
  if (assigned.overflow === 'spill') {
    const warmed = pool.filter((s) => s !== assigned && isWarmed(s, now));
    if (warmed.length > 0) return { kind: 'send', source: assignSource(warmed, messageId), spilled: true };
  }
  const { day, cap } = warmupStatus(assigned, now);
  const until = day !== null && day < 1 ? new Date(`${assigned.warmup!.start}T00:00:00Z`) : nextUtcDay(now);
  const why = day !== null && day < 1 ? `starts its warm-up on ${assigned.warmup!.start}` : `reached its warm-up cap of ${cap} for today (day ${day})`;
  const spill = assigned.overflow === 'spill' ? ' and its pool has no warmed source to spill to' : '';
  return { kind: 'wait', until, reason: `source ${assigned.name} ${why}${spill}` };
}

/**
 * The whole decision for one message to one provider, given how many its assigned source has
 * sent to that provider today: the assigned source while under its cap, else its overflow.
 */
export function chooseSource(input: { assigned: Source; pool: Source[]; now: Date; sentToday: number; messageId: string }): SourceDecision {
  const { cap } = warmupStatus(input.assigned, input.now);
  if (cap === null || input.sentToday < cap) return { kind: 'send', source: input.assigned, spilled: false };
  return overflowFrom(input.assigned, input.pool, input.now, input.messageId);
}
