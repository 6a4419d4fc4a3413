import type { Clock } from '../clock.js';
import type { Pool } from '../db/pool.js';
import type { MessageRow } from '../db/queries/messages.js';
import { claimDue } from './queue.js';
import type { Shaping } from './shaping.js';

/** Suspensions recorded by other workers are read at least this often. */
const SHARED_REFRESH_MS = 1_000;

/**
 * While this worker has messages in flight, a campaign claim that found no campaign mail due is
 * not repeated for this long (one that took nothing because another worker was claiming the same
 * rows is: more may be due behind them): each refill made one after its transactional claim, and in end to end (the API
 * accepting while the workers deliver, no campaign sending) half of a worker's claim statements
 * were that empty campaign claim, each a statement PostgreSQL plans and runs for nothing
 * (docs/decisions/0058-claims-paced-while-busy.md). A campaign's first messages wait at most this
 * much longer for their claim; an idle worker (nothing in flight) always looks.
 */
export const CAMPAIGN_RECHECK_MS = 250;

export interface ClaimerDeps {
  pool: Pool;
  clock: Clock;
  workerId: string;
  leaseMs: number;
  shaping: Shaping;
  /** Mail goes through the configured relay (one destination) rather than to MX hosts. */
  relay: boolean;
}

/**
 * What a worker claims: transactional mail first, then campaign mail (unless held), leaving
 * alone the domains whose destination is suspended or full in this worker, and no more of a
 * destination than its gates have room for. Keeps the count of claimed messages still being
 * delivered per recipient domain, which the next claim leaves to other workers.
 */
export class Claimer {
  /** Messages claimed and still being delivered, by recipient domain (Shaping.claimRooms). */
  private readonly held = new Map<string, number>();
  /** True while this process fans a campaign out: only mail of no campaign is claimed. */
  private campaignsHeld = false;
  /** When the last campaign claim found no campaign mail due (clock ms); null when it found some or none was made since. */
  private campaignEmptyAt: number | null = null;
  private sharedAt = 0;
  /**
   * Whether the last claim took every due message it could: it found fewer due than it asked
   * for (Claim.dueSeen: not merely skipped rows another worker was claiming), took fewer than it
   * asked for, left no destination alone because it was suspended or full, and filled none. Until
   * more mail is announced there is then nothing to claim, and a wake-up because a gate has room
   * can wait (./claim-pacing.ts).
   */
  drained = false;

  constructor(private readonly deps: ClaimerDeps) {}

  /** Holds (or stops holding) campaign mail; returns whether that changed anything. */
  holdCampaigns(hold: boolean): boolean {
    const changed = hold !== this.campaignsHeld;
    this.campaignsHeld = hold;
    // Campaign mail held until now may be due: the next claim looks at once.
    if (changed && !hold) this.campaignEmptyAt = null;
    return changed;
  }

  /**
   * Claims up to `room` due messages. `inFlight` is how many this worker is delivering now:
   * while it is busy, a campaign claim that found none due within CAMPAIGN_RECHECK_MS is not
   * repeated.
   */
  async claim(room: number, inFlight: number): Promise<MessageRow[]> {
    const { shaping, clock } = this.deps;
    const now = clock.now();
    await shaping.flushRoutes();
    if (now.getTime() - this.sharedAt >= SHARED_REFRESH_MS) {
      await shaping.refreshShared();
      this.sharedAt = now.getTime();
    }
    this.drained = false;
    if (this.deps.relay && shaping.relayClosed()) return [];
    // No more of a destination than its gates have room for (the rest stays queued for other
    // workers, rather than being claimed and handed straight back).
    if (this.deps.relay) room = Math.min(room, shaping.relayRoom([...this.held.values()].reduce((a, b) => a + b, 0)));
    if (room <= 0) return [];
    const skipDomains = shaping.closedDomains();
    let sawEnd = true;
    const claim = async (stream: 'transactional' | 'campaign', limit: number) => {
      const { rows, dueSeen } = await claimDue(this.deps.pool, this.deps.workerId, now, limit, this.deps.leaseMs, { stream, skipDomains, rooms: shaping.claimRooms(this.held) });
      for (const m of rows) this.held.set(m.to_domain, (this.held.get(m.to_domain) ?? 0) + 1);
      sawEnd &&= dueSeen < limit;
      return { rows, dueSeen };
    };
    const claimed = (await claim('transactional', room)).rows;
    if (claimed.length < room && this.campaignMayBeDue(now.getTime(), inFlight)) {
      const campaign = await claim('campaign', room - claimed.length);
      // Nothing due, not merely nothing taken (rows another worker was claiming are skipped)
      // nor nothing looked at (the mail of a suspended destination is left out of the search).
      this.campaignEmptyAt = campaign.dueSeen === 0 && skipDomains.length === 0 ? now.getTime() : null;
      claimed.push(...campaign.rows);
    }
    // Mail of a destination left alone (skipDomains) may be waiting for it: not drained.
    this.drained = sawEnd && claimed.length < room && skipDomains.length === 0 && !this.filledADestination(claimed);
    return claimed;
  }

  /** A claimed message's delivery is over (or failed): no longer held for its destination. */
  unhold(m: MessageRow): void {
    const n = (this.held.get(m.to_domain) ?? 1) - 1;
    if (n <= 0) this.held.delete(m.to_domain);
    else this.held.set(m.to_domain, n);
  }

  /** Whether a destination of the `claimed` messages has no room left for this worker. */
  private filledADestination(claimed: MessageRow[]): boolean {
    if (this.deps.relay) return claimed.length > 0 && this.deps.shaping.relayRoom([...this.held.values()].reduce((a, b) => a + b, 0)) <= 0;
    const rooms = this.deps.shaping.claimRooms(this.held);
    const domains = new Set(claimed.map((m) => m.to_domain));
    return rooms.domains.some((d, i) => rooms.rooms[i] <= 0 && domains.has(d));
  }

  private campaignMayBeDue(now: number, inFlight: number): boolean {
    if (this.campaignsHeld) return false;
    return inFlight === 0 || this.campaignEmptyAt === null || now - this.campaignEmptyAt >= CAMPAIGN_RECHECK_MS;
  }
}
