import type { Queryable } from '../../db/pool.js';
import { warmupCountsOn } from '../../db/queries/warmup.js';
import type { SendingIdentity, Source } from './identity.js';
import { warmupStatus } from './warmup.js';

export interface SourceWarmupProgress {
  /** The plan's first day. */
  start: string;
  /** Day of the plan today (1 on the start day; 0 or less before it). */
  day: number;
  /** Most messages per provider today; null past the plan's last day. */
  cap: number | null;
  /** Sent today per provider (traffic shaping's destination name), the counts the cap applies to. */
  sentToday: Record<string, number>;
}

/**
 * Warm-up progress of each source today, for `GET /api/v1/deliverability/sources` and
 * operators' status output; null for a source without a plan.
 */
export async function warmupProgress(db: Queryable, identity: SendingIdentity, now: Date): Promise<Map<string, SourceWarmupProgress | null>> {
  const counts = await warmupCountsOn(db, now.toISOString().slice(0, 10));
  const progress = new Map<string, SourceWarmupProgress | null>();
  for (const source of identity.sources) progress.set(source.name, progressOf(source, now, counts));
  return progress;
}

function progressOf(source: Source, now: Date, counts: { source: string; provider: string; sent: number }[]): SourceWarmupProgress | null {
  if (!source.warmup) return null;
  const { day, cap } = warmupStatus(source, now);
  const sentToday = Object.fromEntries(counts.filter((c) => c.source === source.name).map((c) => [c.provider, c.sent]));
  return { start: source.warmup.start, day: day!, cap, sentToday };
}
