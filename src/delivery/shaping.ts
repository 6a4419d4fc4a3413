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
 * A `Gate` is one destination inside this worker: a message takes a turn (a connection slot
 * and a token) before it is transmitted, and gives the slot back after. Each slot carries at
 * most one SMTP connection (the sender's transport for that slot), so the connections this
 * worker holds open to a destination never exceed its granted slots.
 */
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/pool.js';
import { leaseDestination, type LeaseRequest, recordRoutes, releaseWorkerLeases, selectContested, selectSuspended, throttleDestination } from '../db/queries/shaping.js';
import type { Destination, ProviderPolicy } from '../delivery-policy.js';

/** A lease lives this long without renewal: how soon a dead worker's slots return. */
export const SHAPING_LEASE_MS = 6_000;
/**
 * The heartbeat: this often a worker reads what every worker shares (suspensions, and the
 * destinations where another worker waits for slots it holds), and renews a lease that is a
 * third of its life old or contested. Two small reads a beat, whatever the number of destinations.
 */
export const HEARTBEAT_MS = 250;
/** Token grants are spent at once; this long unspent, they are dropped (a sliding minute stays within its limit). */
const TOKEN_LIFETIME_MS = 1_000;
/**
 * A gate short of tokens asks the shared bucket again after this long at least (or when the
 * next token is due, if later): a batch of the rate, not a token per call.
 */
const TOKEN_ASK_MS = 100;
/** Tokens are asked for ahead of the waiting messages, for those on their way, up to this long of the rate (well within TOKEN_LIFETIME_MS). */
const TOKEN_AHEAD_MS = 250;
/** A gate short of connection slots asks again after this long (another worker gives them back within a heartbeat or two). */
const SLOT_ASK_MS = 200;
/** The bucket holds this many seconds of the rate. */
const BURST_SECONDS = 2;
/**
 * A closed connection still counts for this long: its QUIT may not have reached the receiver
 * yet, and a receiver counting open connections must never see the next one before it has
 * seen this one go.
 */
const CLOSE_GRACE_MS = 250;
/** A message waits this long at most for a turn; then it goes back to the queue. */
const TURN_WAIT_MS = 10_000;
/**
 * A gate with nothing to do for this long closes its connections and gives its slots back, so
 * another worker with mail waiting for the destination gets them (short: a connection is
 * cheap to open again; slots held idle are another worker's delay).
 */
const IDLE_MS = 300;

/**
 * The rate a bucket is refilled at, so that any sliding 60 seconds holds at most
 * `messagesPerMinute`: a full bucket (burst) plus the refill over 60 s plus the lifetime of a
 * granted token (and a second's margin for the send to follow it) stays within the limit.
 */
export function bucketOf(p: Pick<ProviderPolicy, 'messagesPerMinute'>): { rate: number | null; burst: number } {
  const n = p.messagesPerMinute;
  if (n === null) return { rate: null, burst: 0 };
  const burst = Math.max(1, Math.floor((n * BURST_SECONDS) / 60));
  // One second more than the token's lifetime: a send may trail its token by a connection set-up.
  return { rate: Math.max(n - burst, 1) / (60 + TOKEN_LIFETIME_MS / 1000 + 1), burst };
}

/**
 * Local mechanics (connection grace, idle release, a turn's wait, a token's lifetime) run on
 * the monotonic clock; what is shared (leases, buckets, suspensions) on the injected one.
 */
const mono = () => performance.now();

export type Turn = { slot: number } | { closedUntil: Date; reason: 'suspended' | 'no_capacity' };

interface Waiter {
  resolve(t: Turn): void;
  since: number;
}

export class Gate {
  /** Slots granted by the last lease. */
  slots = 0;
  private leaseAt = 0;
  private tokens = 0;
  private tokensAt = 0;
  suspendedUntil = 0;
  rateFactor = 1;
  /** Slot indexes in use, and those with a connection (a transport) open. */
  private readonly busy = new Set<number>();
  readonly open = new Set<number>();
  /** Slots whose connection was closed, with when: not reused, and counted as open, for CLOSE_GRACE_MS. */
  private readonly closing = new Map<number, number>();
  /** Messages each open slot's connection has carried (messagesPerConnection). */
  private readonly carried = new Map<number, number>();
  private readonly waiters: Waiter[] = [];
  /** Messages of this destination in this worker: waiting for or holding a turn, or being built. */
  pending = 0;
  private sent = 0;
  /** Connections the last lease call reported as held. */
  private reported = 0;
  private calling = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = 0;
  /** Waiters trigger no lease call before this (monotonic ms): the last call said when to come back. */
  private askAfter = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private idleSince: number;
  readonly domains = new Set<string>();
  readonly bucket: { rate: number | null; burst: number };

  constructor(
    readonly dest: Destination,
    private readonly shaping: Shaping,
  ) {
    this.bucket = bucketOf(dest.policy);
    this.idleSince = mono();
  }

  get policy(): ProviderPolicy {
    return this.dest.policy;
  }

  /** Messages this worker keeps for the destination at most; more go back to the queue for now. */
  get cap(): number {
    const p = this.policy;
    const perSecond = p.messagesPerMinute === null ? Infinity : p.messagesPerMinute / 60;
    return Math.max(2, Math.min(p.maxConnections * 4, Math.ceil(perSecond * 3) + p.maxConnections));
  }

  /** Whether the claim should leave this destination's mail alone for now. */
  closed(now: number): boolean {
    return now < this.suspendedUntil || this.pending >= this.cap;
  }

  /** A connection slot and a token, or the time to come back. */
  turn(): Promise<Turn> {
    const now = this.shaping.nowMs();
    if (now < this.suspendedUntil) return Promise.resolve({ closedUntil: new Date(this.suspendedUntil), reason: 'suspended' });
    return new Promise<Turn>((resolve) => {
      this.waiters.push({ resolve, since: mono() });
      this.pump();
    });
  }

  /** The turn's message was transmitted (or tried): its slot is free again. */
  done(slot: number, transmitted: boolean): void {
    this.busy.delete(slot);
    if (transmitted) this.sent++;
    const carried = (this.carried.get(slot) ?? 0) + 1;
    this.carried.set(slot, carried);
    if (slot >= this.slots || carried >= this.policy.messagesPerConnection) this.closeSlot(slot);
    if (this.busy.size === 0 && this.waiters.length === 0) {
      this.idleSince = mono();
      this.releaseWhenIdle();
    }
    this.pump();
  }

  /** A throttle reply: every waiting message goes back until `until`. */
  suspend(until: number): void {
    this.suspendedUntil = Math.max(this.suspendedUntil, until);
    this.tokens = 0;
    for (const w of this.waiters.splice(0)) w.resolve({ closedUntil: new Date(this.suspendedUntil), reason: 'suspended' });
  }

  private closeSlot(slot: number): void {
    this.carried.delete(slot);
    if (this.open.delete(slot)) {
      this.closing.set(slot, mono());
      this.shaping.onSlotClosed(this.dest, slot);
      this.retryIn(CLOSE_GRACE_MS);
    }
  }

  /** Connections open or closed too recently to be sure the receiver has seen them go. */
  private openCount(now: number): number {
    for (const [slot, at] of this.closing) if (now - at >= CLOSE_GRACE_MS) this.closing.delete(slot);
    return this.open.size + this.closing.size;
  }

  /** A slot to use now: one whose connection is open and idle, else a new one while the open ones stay within the grant. */
  private freeSlot(): number | null {
    const open = this.openCount(mono());
    let fresh: number | null = null;
    for (let i = 0; i < this.slots; i++) {
      if (this.busy.has(i) || this.closing.has(i)) continue;
      if (this.open.has(i)) return i;
      fresh ??= i;
    }
    if (fresh === null) return null;
    if (open < this.slots) return fresh;
    // The idle connections left are beyond the grant: close them; their slots free up after the grace.
    for (const s of [...this.open]) if (!this.busy.has(s)) this.closeSlot(s);
    return null;
  }

  private hasToken(now: number): boolean {
    if (this.bucket.rate === null && this.policy.messagesPerDay === null) return true;
    if (now - this.tokensAt > TOKEN_LIFETIME_MS) this.tokens = 0;
    return this.tokens > 0;
  }

  /** Hands out turns while slots and tokens allow; asks the database for more when they do not. */
  pump(): void {
    const now = this.shaping.nowMs();
    const t = mono();
    if (now < this.suspendedUntil) {
      this.suspend(this.suspendedUntil);
      return;
    }
    // Waiters past their time go back to the queue: the claim will bring them again.
    while (this.waiters.length > 0 && t - this.waiters[0].since > TURN_WAIT_MS) {
      this.waiters.shift()!.resolve({ closedUntil: new Date(now), reason: 'no_capacity' });
    }
    while (this.waiters.length > 0 && this.leaseAt > 0 && t - this.leaseAt < SHAPING_LEASE_MS) {
      const slot = this.freeSlot();
      if (slot === null || !this.hasToken(t)) break;
      if (this.bucket.rate !== null || this.policy.messagesPerDay !== null) this.tokens--;
      this.busy.add(slot);
      this.open.add(slot);
      this.waiters.shift()!.resolve({ slot });
    }
    if (this.waiters.length > 0 || this.mustReport(t)) {
      if (t >= this.askAfter) void this.lease();
      else this.retryIn(this.askAfter - t);
    }
  }

  /**
   * The last lease call reported more connections than the grant, and some have closed since:
   * another worker is waiting for them, and gets them only once the database knows.
   */
  private mustReport(t: number): boolean {
    return this.reported > this.slots && this.openCount(t) < this.reported;
  }

  /** Whether the lease is a third of its life old (the heartbeat renews it). */
  renewalDue(): boolean {
    return mono() - this.leaseAt >= SHAPING_LEASE_MS / 3;
  }

  /** Suspended now (a throttle reply here, or one another worker recorded). */
  suspended(): boolean {
    return this.shaping.nowMs() < this.suspendedUntil;
  }

  /** Whether the gate has anything to renew or report. */
  active(): boolean {
    const t = mono();
    return this.waiters.length > 0 || this.busy.size > 0 || this.openCount(t) > 0 || this.sent > 0 || (this.leaseAt > 0 && t - this.idleSince < IDLE_MS);
  }

  /** One lease call: slots for what waits and runs, tokens for what can start now. */
  async lease(): Promise<void> {
    if (this.calling) return;
    this.calling = true;
    const now = this.shaping.nowMs();
    const t = mono();
    const p = this.policy;
    if (this.busy.size === 0 && this.waiters.length === 0 && t - this.idleSince >= IDLE_MS) {
      for (const slot of [...this.open]) this.closeSlot(slot);
    }
    const want = Math.min(p.maxConnections, this.shaping.maxConnectionsPerWorker, this.busy.size + this.waiters.length);
    const limited = this.bucket.rate !== null || p.messagesPerDay !== null;
    // Tokens for the messages waiting now and, ahead of them, for those on their way (built or
    // being built) up to TOKEN_AHEAD_MS of the rate: one call per batch. Asking only for the
    // waiters made a call per message whenever the bucket was not the limit (each waiter found
    // the tokens of the last call spent).
    const held = t - this.tokensAt > TOKEN_LIFETIME_MS ? 0 : this.tokens;
    const ahead = this.bucket.rate === null ? 0 : Math.min(this.pending - this.busy.size, Math.ceil((this.bucket.rate * this.rateFactor * TOKEN_AHEAD_MS) / 1000));
    const wantTokens = limited ? Math.max(0, Math.min(Math.max(this.waiters.length, ahead) - held, Math.max(1, this.bucket.burst))) : 0;
    const sent = this.sent;
    this.sent = 0;
    const open = this.openCount(t);
    try {
      const g = await this.shaping.leaseCall({
        destination: this.dest.key, source: this.dest.source, provider: p.name, now: new Date(now),
        wantConnections: want, open, inFlight: this.busy.size, wantTokens, sent,
        maxConnections: p.maxConnections, rate: this.bucket.rate, burst: this.bucket.burst, perDay: p.messagesPerDay,
        leaseMs: SHAPING_LEASE_MS, rampMs: p.rampEveryMs,
      });
      this.slots = g.connections;
      this.reported = Math.max(g.connections, open);
      this.leaseAt = t;
      this.rateFactor = g.rateFactor;
      if (g.tokens > 0) {
        this.tokens = (t - this.tokensAt > TOKEN_LIFETIME_MS ? 0 : this.tokens) + g.tokens;
        this.tokensAt = t;
      }
      if (g.suspendedUntil && g.suspendedUntil.getTime() > now) this.suspendedUntil = g.suspendedUntil.getTime();
      // Slots beyond the grant close as soon as their message is done.
      for (const slot of [...this.open]) if (slot >= this.slots && !this.busy.has(slot)) this.closeSlot(slot);
      // Short of tokens or slots: the waiters ask again when the bucket has refilled a batch
      // (not at once: back-to-back calls each found a token or none, and kept every worker's
      // gates polling the database), or when a slot may have been given back.
      const shortOfTokens = limited && held + g.tokens < this.waiters.length;
      if (this.waiters.length > 0 && (shortOfTokens || g.connections < want)) {
        const wait = shortOfTokens ? Math.min(Math.max(g.retryMs, TOKEN_ASK_MS), 1_000) : SLOT_ASK_MS;
        this.askAfter = t + wait;
        this.retryIn(wait);
      } else if (limited) {
        // Even when served in full: calls for tokens stay a batch apart.
        this.askAfter = t + TOKEN_ASK_MS / 2;
      }
    } catch (err) {
      this.sent += sent;
      this.shaping.onError(err);
      this.askAfter = t + 1_000;
      this.retryIn(1_000);
    } finally {
      this.calling = false;
    }
    this.pump();
  }

  /** Gives the slots back once the gate has stayed idle for IDLE_MS (one lease call, wanting none). */
  private releaseWhenIdle(): void {
    if (this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.busy.size === 0 && this.waiters.length === 0 && (this.slots > 0 || this.reported > 0)) void this.lease().then(() => this.releaseWhenIdle());
    }, IDLE_MS + 10);
    this.idleTimer.unref();
  }

  /** Pumps again in `ms` (or sooner, when a sooner pump is already due). */
  private retryIn(ms: number): void {
    const at = mono() + Math.max(10, ms);
    if (this.timer) {
      if (this.timerAt <= at) return;
      clearTimeout(this.timer);
    }
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, Math.max(10, ms));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.timer = null;
    this.idleTimer = null;
    for (const w of this.waiters.splice(0)) w.resolve({ closedUntil: new Date(this.shaping.nowMs()), reason: 'no_capacity' });
  }
}

export interface ShapingDeps {
  db: Queryable;
  clock: Clock;
  worker: string;
  /** This worker's own cap on connections to one destination (POSTLINE_MX_CONNECTIONS_PER_HOST). */
  maxConnectionsPerWorker: number;
  /** The source addresses of the delivery policy (none: one implicit source ''). A destination is closed to claims only when all of them are. */
  sources?: string[];
  /** A slot's connection is to be closed (the sender's transport for that slot). */
  onSlotClosed(dest: Destination, slot: number): void;
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

  onSlotClosed(dest: Destination, slot: number): void {
    this.deps.onSlotClosed(dest, slot);
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

  /** Relay mode: whether the relay takes nothing now. */
  relayClosed(): boolean {
    const now = this.nowMs();
    const g = this.gates.get('relay|');
    return this.shared.some((s) => s.destination === 'relay' && s.until > now) || (g !== undefined && g.closed(now));
  }

  /** Reads the suspensions every worker shares (one query), and applies them to this worker's gates. */
  async refreshShared(): Promise<void> {
    const rows = await selectSuspended(this.deps.db, this.deps.clock.now());
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
    const [contested] = await Promise.all([selectContested(this.deps.db, this.deps.worker, this.deps.clock.now()), this.refreshShared()]);
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
