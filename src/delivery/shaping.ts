/**
 * Traffic shaping, one step of delivery (docs/delivery-policy.md, decision 0024). The limits
 * of a destination hold across every worker: the state lives in PostgreSQL (migration 023)
 * and a worker leases from it, one call per destination at a time, never one per message:
 *
 * - connection slots, renewed every few seconds; a dead worker's slots return when its lease
 *   expires (SHAPING_LEASE_MS); a worker holding more than its share of slots another worker
 *   waits for renews at its next heartbeat (HEARTBEAT_MS) and closes what it gave up;
 * - per-minute tokens from a shared bucket, taken in batches for the messages waiting;
 * - suspensions after a throttle reply, which every worker reads within a heartbeat.
 *
 * A `Gate` (./gate.ts) is one destination inside this worker; `Shaping` holds the gates, the
 * heartbeat, the suspensions every worker shares and the routes of domains to destinations.
 */
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/pool.js';
import { leaseDestination, type LeaseRequest, recordRoutes, releaseWorkerLeases, selectHeartbeat, selectSuspended, throttleDestination } from '../db/queries/shaping.js';
import type { Destination } from '../delivery-policy.js';
import { Gate } from './gate.js';
import type { DestinationRooms } from './queue.js';

/**
 * The heartbeat: this often a worker reads what every worker shares (suspensions, and the
 * destinations where another worker waits for slots it holds), and renews a lease that is a
 * third of its life old or contested. One small read a beat, whatever the number of destinations.
 */
export const HEARTBEAT_MS = 250;

export interface ShapingDeps {
  db: Queryable;
  clock: Clock;
  worker: string;
  /** This worker's own cap on connections to one destination (POSTLINE_MX_CONNECTIONS_PER_HOST). */
  maxConnectionsPerWorker: number;
  /** The source addresses of the delivery policy (none: one implicit source ''). A destination is closed to claims only when all of them are. */
  sources?: string[];
  /** A slot's connection is to be closed (the sender's transport for that slot); `gone` when the server has seen it go (its QUIT answered). */
  onSlotClosed(dest: Destination, slot: number, gone: () => void): void;
  onError(err: unknown): void;
}

/** The worker's view of every destination's shared budget. */
export class Shaping {
  private readonly gates = new Map<string, Gate>();
  /** Suspensions other workers recorded: destination → until, and their domains. */
  private shared: { destination: string; source: string; until: number; domains: string[] }[] = [];
  private readonly knownRoutes = new Map<string, string>();
  private readonly newRoutes: { domain: string; destination: string }[] = [];
  private renewTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: ShapingDeps) {}

  get maxConnectionsPerWorker(): number {
    return this.deps.maxConnectionsPerWorker;
  }

  nowMs(): number {
    return this.deps.clock.now().getTime();
  }

  leaseCall(r: Omit<LeaseRequest, 'worker'>) {
    return leaseDestination(this.deps.db, { ...r, worker: this.deps.worker });
  }

  onSlotClosed(dest: Destination, slot: number, gone: () => void): void {
    this.deps.onSlotClosed(dest, slot, gone);
  }

  onError(err: unknown): void {
    this.deps.onError(err);
  }

  static slotKey(dest: Destination, slot: number): string {
    return `${dest.key}|${dest.source}#${slot}`;
  }

  gate(dest: Destination): Gate {
    const id = `${dest.key}|${dest.source}`;
    let g = this.gates.get(id);
    if (!g) {
      g = new Gate(dest, this);
      this.gates.set(id, g);
    }
    return g;
  }

  /** The recipient domain goes to `dest`; remembered in the database the first time. */
  route(domain: string, dest: Destination): Gate {
    const g = this.gate(dest);
    g.domains.add(domain);
    if (this.knownRoutes.get(domain) !== dest.key) {
      this.knownRoutes.set(domain, dest.key);
      this.newRoutes.push({ domain, destination: dest.key });
    }
    return g;
  }

  /** Writes the routes learnt since the last call (one statement). */
  async flushRoutes(): Promise<void> {
    const routes = this.newRoutes.splice(0);
    await recordRoutes(this.deps.db, routes, this.deps.clock.now());
  }

  /**
   * Domains the next claim leaves alone: their destination is suspended, or full in this
   * worker — from every source: with sources, a throttle suspends one (destination, source)
   * path, and mail assigned to the other sources keeps flowing (a claimed message of the
   * closed source is handed back untried).
   */
  closedDomains(): string[] {
    const now = this.nowMs();
    const sources = this.deps.sources?.length ? this.deps.sources : [''];
    const closed = new Map<string, { sources: Set<string>; domains: Set<string> }>();
    const close = (destination: string, source: string, domains: Iterable<string>) => {
      let c = closed.get(destination);
      if (!c) closed.set(destination, (c = { sources: new Set(), domains: new Set() }));
      c.sources.add(source);
      for (const d of domains) c.domains.add(d);
    };
    for (const s of this.shared) if (s.until > now) close(s.destination, s.source, s.domains);
    for (const g of this.gates.values()) if (g.dest.key !== 'relay' && g.closed(now)) close(g.dest.key, g.dest.source, g.domains);
    const out = new Set<string>();
    for (const c of closed.values()) if (sources.every((s) => c.sources.has(s))) for (const d of c.domains) out.add(d);
    return [...out];
  }

  /**
   * What the next claim may take of each destination this worker has routed mail to: the caps
   * of its gates that are open, less the messages of its domains this worker holds already
   * (`held`: claimed and still being delivered, by recipient domain, whether or not they have reached
   * their gate yet). A destination not seen yet is not capped: its first claim learns its route.
   */
  claimRooms(held: ReadonlyMap<string, number>): DestinationRooms {
    const now = this.nowMs();
    const byDestination = new Map<string, { cap: number; domains: Set<string> }>();
    for (const g of this.gates.values()) {
      if (g.dest.key === 'relay') continue;
      let d = byDestination.get(g.dest.key);
      if (!d) byDestination.set(g.dest.key, (d = { cap: 0, domains: new Set() }));
      if (!g.closed(now)) d.cap += g.cap;
      for (const domain of g.domains) d.domains.add(domain);
    }
    const out: DestinationRooms = { domains: [], destinations: [], rooms: [] };
    for (const [destination, d] of byDestination) {
      let holding = 0;
      for (const domain of d.domains) holding += held.get(domain) ?? 0;
      const room = Math.max(0, d.cap - holding);
      for (const domain of d.domains) {
        out.domains.push(domain);
        out.destinations.push(destination);
        out.rooms.push(room);
      }
    }
    return out;
  }

  /** Relay mode: what the next claim may take, given the `held` messages this worker holds already (the relay gate's cap less them). */
  relayRoom(held: number): number {
    const g = this.gates.get('relay|');
    if (g === undefined) return Infinity;
    return g.closed(this.nowMs()) ? 0 : Math.max(0, g.cap - held);
  }

  /** Relay mode: whether the relay takes nothing now. */
  relayClosed(): boolean {
    const now = this.nowMs();
    const g = this.gates.get('relay|');
    return this.shared.some((s) => s.destination === 'relay' && s.until > now) || (g !== undefined && g.closed(now));
  }

  /** Reads the suspensions every worker shares (one query), and applies them to this worker's gates. */
  async refreshShared(): Promise<void> {
    this.applySuspensions(await selectSuspended(this.deps.db, this.deps.clock.now()));
  }

  private applySuspensions(rows: { destination: string; source: string; until: Date; domains: string[] }[]): void {
    this.shared = rows.map((r) => ({ destination: r.destination, source: r.source, until: r.until.getTime(), domains: r.domains }));
    for (const r of rows) {
      const g = this.gates.get(`${r.destination}|${r.source}`);
      if (g && g.suspendedUntil < r.until.getTime()) g.suspend(r.until.getTime());
    }
  }

  /** A throttle reply from `dest`: suspends it for every worker and parks its queue. Returns when it resumes. */
  async throttle(dest: Destination, suspendMs: number, reply: string): Promise<Date> {
    const gate = this.gate(dest);
    const now = this.nowMs();
    // Replies to messages already in flight find the suspension in place: one write per suspension.
    if (gate.suspendedUntil >= now + suspendMs - 1_000) return new Date(gate.suspendedUntil);
    gate.suspend(now + suspendMs);
    const until = await throttleDestination(this.deps.db, {
      destination: dest.key, source: dest.source, provider: dest.policy.name, now: new Date(now), until: new Date(now + suspendMs), reply, decrease: dest.policy.resumeFactor,
    });
    gate.suspend(until.getTime());
    this.shared.push({ destination: dest.key, source: dest.source, until: until.getTime(), domains: [...gate.domains] });
    return until;
  }

  /** Heartbeats so far (tests count them: how many it takes for a share to move). */
  beats = 0;

  /** Starts the heartbeat (HEARTBEAT_MS). */
  start(): void {
    if (this.renewTimer) return;
    let beating = false;
    this.renewTimer = setInterval(() => {
      // A beat that outlasts the period (a loaded database) is not stacked on.
      if (beating) return;
      beating = true;
      void this.beat().catch((err) => this.onError(err)).finally(() => (beating = false));
    }, HEARTBEAT_MS);
    this.renewTimer.unref();
  }

  /**
   * One heartbeat: the suspensions every worker shares, and the destinations where another
   * worker waits for slots this one holds (renewed now: the grant shrinks to a fair share and
   * the connections beyond it close as soon as their message is done); other active leases are
   * renewed when a third of their life has passed.
   */
  async beat(): Promise<void> {
    const { suspended, contested } = await selectHeartbeat(this.deps.db, this.deps.worker, this.deps.clock.now());
    this.applySuspensions(suspended);
    const wanted = new Set(contested.map((c) => `${c.destination}|${c.source}`));
    this.beats++;
    await Promise.all([...this.gates.entries()].filter(([id, g]) => wanted.has(id) || (g.active() && g.renewalDue())).map(([, g]) => g.lease()));
  }

  async close(): Promise<void> {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    for (const g of this.gates.values()) g.stop();
    await releaseWorkerLeases(this.deps.db, this.deps.worker);
  }
}
