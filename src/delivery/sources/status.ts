import type { Queryable } from '../../db/pool.js';
import { warmupCountsOn } from '../../db/queries/warmup.js';
import { listSourceChecks } from '../../db/queries/source-checks.js';
import type { SourceCheck } from '../../mail/fcrdns.js';
import type { SendingIdentity, Source } from '../../sending-identity.js';
import { warmupStatus } from './warmup.js';

export interface SourceWarmupProgress {
  /** The plan's first day. */
  start: string;
  /** Day of the plan today (1 on the start day; 0 or less before it). */
  day: number;
  /** Most messages per provider today; null past the plan's last day. */
  cap: number | null;
  /** Sent today from this source, all providers together. */
  sentToday: number;
  /**
   * Sent today per provider (traffic shaping's destination name: gmail, microsoft, …, or an
   * `mx:` rolled-up host set), each the count `cap` applies to; busiest first.
   */
  providers: { name: string; sentToday: number }[];
}

/**
 * Warm-up progress of each source today, for `GET /api/v1/deliverability/sources` and
 * `postline delivery status`; null for a source without a plan.
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
  const providers = counts.filter((c) => c.source === source.name)
    .map((c) => ({ name: c.provider, sentToday: c.sent }))
    .sort((a, b) => b.sentToday - a.sentToday || a.name.localeCompare(b.name));
  return { start: source.warmup.start, day: day!, cap, sentToday: providers.reduce((n, p) => n + p.sentToday, 0), providers };
}

export interface SourceStatus {
  name: string;
  address: string;
  ehlo: string;
  pools: string[];
  /** The start-up forward-confirmed reverse DNS check; null until a start checked this source as it is now. */
  dns: Omit<SourceCheck, 'name' | 'address' | 'ehlo' | 'checkedAt'> & { checkedAt: string } | null;
  warmup: SourceWarmupProgress | null;
}

/** Every source of the policy with its pools, DNS check and warm-up today (`postline delivery status`). */
export async function sourcesStatus(db: Queryable, identity: SendingIdentity, now: Date): Promise<SourceStatus[]> {
  const warmup = await warmupProgress(db, identity, now);
  const checks = new Map((await listSourceChecks(db)).map((c) => [c.name, c]));
  return identity.sources.map((s) => {
    const c = checks.get(s.name);
    // A check of an older policy's source of the same name but another address does not count.
    const dns = c && c.address === s.address && c.ehlo === s.ehlo
      ? { forward: c.forward, reverse: c.reverse, ok: c.ok, warning: c.warning, checkedAt: c.checkedAt.toISOString() }
      : null;
    return {
      name: s.name,
      address: s.address,
      ehlo: s.ehlo,
      pools: Object.entries(identity.pools).filter(([, members]) => members.includes(s.name)).map(([p]) => p),
      dns,
      warmup: warmup.get(s.name) ?? null,
    };
  });
}
