/**
 * One destination's shaping inside one worker (./shaping.ts holds them all and the shared
 * state): a message takes a turn — a connection slot and a per-minute token — before it is
 * transmitted, and gives the slot back after. Slots and tokens are leased for the gate by its
 * host in batches, never one call per message; each slot carries at most one SMTP connection,
 * so the connections this worker holds open to a destination never exceed its granted slots.
 * The per-minute token bucket's sizes and timings: ./token-bucket.ts.
 */
import { performance } from 'node:perf_hooks';
import type { LeaseRequest, LeaseGrant } from '../db/queries/shaping.js';
import type { Destination, ProviderPolicy } from '../delivery-policy.js';
import { bucketOf, TOKEN_AHEAD_MS, TOKEN_ASK_MS, TOKEN_LIFETIME_MS } from './token-bucket.js';

/** A lease lives this long without renewal: how soon a dead worker's slots return. */
export const SHAPING_LEASE_MS = 6_000;

/** What a gate needs of the worker's shaping (./shaping.ts). */
export interface GateHost {
  readonly maxConnectionsPerWorker: number;
  nowMs(): number;
  leaseCall(r: Omit<LeaseRequest, 'worker'>): Promise<LeaseGrant>;
  /** Closes the slot's connection; `gone` once the receiver has seen it go (its QUIT answered). */
  onSlotClosed(dest: Destination, slot: number, gone: () => void): void;
  onError(err: unknown): void;
}
/** A gate short of connection slots asks again after this long (another worker gives them back within a heartbeat or two). */
const SLOT_ASK_MS = 200;
/**
 * A closed connection still counts for this long, or until the receiver answered its QUIT and
 * the connection ended, whichever comes first: its QUIT may not have reached the receiver yet,
 * and a receiver counting open connections must never see the next one before it has seen
 * this one go. (The grace alone held every slot of a destination idle for 250 ms each time its
 * connections reached messagesPerConnection, all at once: docs/decisions/0053-*.md.)
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
    private readonly shaping: GateHost,
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
      const at = mono();
      this.closing.set(slot, at);
      this.shaping.onSlotClosed(this.dest, slot, () => {
        // The receiver answered the QUIT: this close is over (unless the slot closed again since).
        if (this.closing.get(slot) !== at) return;
        this.closing.delete(slot);
        this.pump();
      });
      this.retryIn(CLOSE_GRACE_MS);
    }
  }

  /** Connections open or closed too recently to be sure the receiver has seen them go. */
  private openCount(now: number): number {
    for (const [slot, at] of this.closing) if (now - at >= CLOSE_GRACE_MS) this.closing.delete(slot);
    return this.open.size + this.closing.size;
  }

  /** Milliseconds until the first connection in its close grace counts as gone (null: none is). */
  private closeGraceLeft(t: number): number | null {
    let first: number | null = null;
    for (const at of this.closing.values()) if (first === null || at < first) first = at;
    return first === null ? null : first + CLOSE_GRACE_MS - t;
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
    if (!this.limited) return true;
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
      if (this.limited) this.tokens--;
      this.busy.add(slot);
      this.open.add(slot);
      this.waiters.shift()!.resolve({ slot });
    }
    // Waiters held back by a connection still in its close grace: pump again when the first
    // grace ends. The timer armed at the close is not enough: it runs on the event loop's
    // clock, read at the start of the loop's turn, so it can fire a few ms before the grace
    // ends on this one; nothing else pumped then until the next lease renewal (up to 2 s
    // with every slot closing and every waiter parked: docs/decisions/0053-*.md).
    if (this.waiters.length > 0) {
      const graceLeft = this.closeGraceLeft(t);
      if (graceLeft !== null) this.retryIn(graceLeft);
    }
    if ((this.waiters.length > 0 && this.leaseCouldServe(t)) || this.mustReport(t)) {
      if (t >= this.askAfter) void this.lease();
      else this.retryIn(this.askAfter - t);
    }
  }

  /**
   * Whether a lease call could give the waiters anything now: the lease has lapsed, tokens are
   * short, or fewer slots are granted than are wanted. A gate holding every slot it may use and
   * needing no tokens (a destination without a rate limit) only waits for one of its own turns
   * to end, which no call can hasten: asking anyway cost a call per message sent (a slot freed,
   * the next waiter took it, the ones behind it asked), 692 calls for 3,000 messages. The
   * heartbeat renews such a lease.
   */
  private leaseCouldServe(t: number): boolean {
    if (this.leaseAt === 0 || t - this.leaseAt >= SHAPING_LEASE_MS) return true;
    if (this.limited && !this.hasToken(t)) return true;
    return this.slots < this.wantedSlots();
  }

  /** Whether turns take tokens: a per-minute limit or a 24-hour quota. */
  private get limited(): boolean {
    return this.bucket.rate !== null || this.policy.messagesPerDay !== null;
  }

  /**
   * Connection slots worth holding now: one per message of the destination in this worker
   * (running, waiting for a turn, or claimed and being built: `pending`), within both caps.
   * Counting only those running or waiting, a lease call made between two claims (the gate
   * briefly empty while the next claim's messages were built) was granted 0 or 1 slot, and the
   * connections beyond it were closed, to be opened again moments later
   * (docs/decisions/0056-postgres-and-idle-cores.md).
   */
  private wantedSlots(): number {
    return Math.min(this.policy.maxConnections, this.shaping.maxConnectionsPerWorker, Math.max(this.pending, this.busy.size + this.waiters.length));
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
    const want = this.wantedSlots();
    const limited = this.limited;
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
