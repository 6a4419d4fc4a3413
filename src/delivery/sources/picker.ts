/**
 * The delivery step that says which source address a message leaves from
 * (docs/sending-identity.md): the pool of its stream (campaign mail is broadcast, the rest
 * transactional) or of its account, a source of that pool by the message's id, and that
 * source's warm-up cap for the provider today — reserved in PostgreSQL so the cap holds for
 * every worker — or its overflow (spill to a warmed source, or wait).
 */
import type { Clock } from '../../clock.js';
import type { Queryable } from '../../db/pool.js';
import { getAccount } from '../../db/queries/accounts.js';
import { reserveWarmupSend } from '../../db/queries/warmup.js';
import { poolFor, sourceNamed, type SendingIdentity, type Source, type Stream } from '../../sending-identity.js';
import { assignSource, overflowFrom, warmupStatus } from './warmup.js';

export type SourcePick = { source: Source } | { waitUntil: Date; reason: string };

/** An account's own pools change rarely (an operator's CLI): read at most this often per process. */
const ACCOUNT_POOLS_CACHE_MS = 30_000;

export class SourcePicker {
  private readonly accountPools = new Map<string, { pools: Record<Stream, string | null>; at: number }>();

  constructor(private readonly deps: { db: Queryable; identity: SendingIdentity; clock: Clock }) {}

  /** Whether the policy names sources at all; without them mail leaves as before and pick() is not called. */
  get active(): boolean {
    return this.deps.identity.sources.length > 0;
  }

  /** The source for a message to `provider` (traffic shaping's destination key), or when to try again. */
  async pick(msg: { id: string; account_id: string; campaign_id: string | null }, provider: string): Promise<SourcePick> {
    const { identity, clock } = this.deps;
    const stream: Stream = msg.campaign_id ? 'broadcast' : 'transactional';
    const poolName = poolFor(identity, stream, (await this.poolsOf(msg.account_id))[stream]);
    const pool = identity.pools[poolName].map((name) => sourceNamed(identity, name)!);
    const assigned = assignSource(pool, msg.id);
    const now = clock.now();
    const { cap } = warmupStatus(assigned, now);
    if (cap === null) return { source: assigned };
    const day = now.toISOString().slice(0, 10);
    if (cap > 0 && (await reserveWarmupSend(this.deps.db, { source: assigned.name, provider, day, cap }))) return { source: assigned };
    const overflow = overflowFrom(assigned, pool, now, msg.id);
    return overflow.kind === 'send' ? { source: overflow.source } : { waitUntil: overflow.until, reason: overflow.reason };
  }

  private async poolsOf(accountId: string): Promise<Record<Stream, string | null>> {
    const now = Date.now();
    const hit = this.accountPools.get(accountId);
    if (hit && now - hit.at < ACCOUNT_POOLS_CACHE_MS) return hit.pools;
    const row = await getAccount(this.deps.db, accountId);
    const pools = { transactional: row?.pool_transactional ?? null, broadcast: row?.pool_broadcast ?? null };
    this.accountPools.set(accountId, { pools, at: now });
    return pools;
  }
}
