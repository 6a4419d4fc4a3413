import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { MessageRow } from '../db/queries/messages.js';
import { planOutcome, type DeferralCause } from './outcome.js';
import { recordSteps, type Attempted, type Step } from './record.js';
import type { BuiltMessage } from '../domain/sending/message-build.js';
import { TrackingLinks } from '../domain/tracking/links.js';
import { fixedVerdict, type DeliveryResult } from '../mail/classify.js';
import type { MailDns } from '../mail/dns.js';
import { SmtpSender, type SmtpTarget } from '../mail/smtp.js';
import { Claimer } from './claimer.js';
import { holderGone, newLeaseHolder, releaseDeadLeases } from './lease-holders.js';
import type { Destination } from '../delivery-policy.js';
import { readReply } from './replies.js';
import { Shaping } from './shaping.js';
import { GroupCommit } from '../db/group-commit.js';
import { envelopeAddress } from '../domain/email-address.js';
import { captureMessage } from '../db/queries/captured.js';
import { deliverWithSts } from '../mail/mta-sts/deliver.js';
import type { TlsSessionResult } from '../mail/tls-rpt/report.js';
import { MessageBuilder, type ContentSource } from './builder.js';
import { DestinationRouter } from './router.js';

export interface DeliveryDeps {
  pool: Pool;
  config: Config;
  clock: Clock;
  log: Logger;
  /** Tests pass a resolver pointed at their DNS server via config.dnsServers; this overrides it. */
  dns?: MailDns;
  /** CA certificates trusted besides Node's roots for MTA-STS (policy hosts, verified MX sessions): tests' own CA. Production uses NODE_EXTRA_CA_CERTS. */
  extraCa?: string[];
  /** Where content that is not stored with the message comes from (campaigns plug their renderer in here). */
  content: (links: TrackingLinks) => ContentSource;
}

export interface DeliveryOptions {
  /** Messages claimed and in flight at once. */
  batchSize: number;
  leaseMs: number;
  maxConnectionsPerHost: number;
  /**
   * Messages being built and signed at once; the rest of the batch waits its turn. All 200 of
   * a claim built together interleave their composition streams, so every build's temporary
   * buffers outlive young-generation collections and fill the old space: worker RSS 290–320 MB,
   * against 235–297 MB with 32 at once at about the same delivered/s (docs/benchmarks.md; 16 was slower).
   */
  buildsAtOnce: number;
}

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = { batchSize: 200, leaseMs: 5 * 60_000, maxConnectionsPerHost: 10, buildsAtOnce: 32 };

/** Thrown before a message's transmission when its destination was suspended meanwhile: it goes back untried. */
class HeldBack extends Error {
  constructor(readonly until: Date) {
    super('destination suspended');
  }
}

/** Outcomes written together at most: a flush is one transaction of a few statements. */
const MAX_OUTCOMES_PER_WRITE = 100;

/**
 * A write of fewer outcomes than this waits up to OUTCOME_GATHER_MS for more. Each write costs
 * the database ~1.5–2.5 ms of CPU whatever its size (the events triggers' statements, the
 * updates' index work) and ~0.09 ms per outcome; written as soon as the last write ended,
 * groups held ~8 outcomes in bench:delivery. The wait adds at most that much to when an
 * outcome is recorded (its webhook, its stats); the messages waiting stay counted in flight,
 * so a kill -9 still re-sends at most a batch (docs/decisions/0046-worker-statements-planned-once.md).
 */
const OUTCOME_GATHER = { ms: 50, upTo: 50 };

/**
 * A failure of ours before anything reached a server (the message could not be built, or
 * needs something we do not do): the message fails and the recipient is never suppressed.
 */
export function notSentByUs(reason: string): DeliveryResult {
  return { kind: 'hard_bounce', response: `not sent: ${reason}`, code: null, enhanced: null, mx: null, ourFault: true, verdict: fixedVerdict('rejected', null, true) };
}

/**
 * The delivery engine of one worker process: claim due messages (SKIP LOCKED + lease), build
 * and sign each once, hand it to the recipient's MX (or the relay, or the capture store), and
 * record each outcome with its events and suppressions as soon as it is known: outcomes that
 * finish while a write is in flight are written together by the next one (group commit), so a
 * kill -9 leaves unrecorded only the messages that were in flight, and only those are re-sent.
 * Lease holders and the release of a dead predecessor's leases: ./lease-holders.ts.
 * Each message's destination, source address and MTA-STS policy: ./router.ts.
 */
export class DeliveryEngine {
  readonly workerId = newLeaseHolder();
  private reclaimed = false;
  /** Deliveries started by `refill` and not yet recorded. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly outcomes: GroupCommit<Step, void>;
  /** Per-destination limits shared with every worker (./shaping.ts). */
  readonly shaping: Shaping;
  /** What each claim takes (./claimer.ts). */
  private readonly claimer: Claimer;
  /** A destination has room again (see refill); and the loop's wake-up, from the last refill. */
  private gateRoom = false;
  private wake: ((drained: boolean) => void) | null = null;
  /** Set by each refill; the first completion that leaves half the batch free or more calls onRoom once. */
  private roomArmed = false;
  /** onRoom is called once in-flight falls to this (set by each refill). */
  private lowWater = 0;
  private lastClaimFull = false;
  private readonly sender: SmtpSender;
  /** Render, compose and sign (./builder.ts). */
  readonly builder: MessageBuilder;
  /** Each message's destination, source address and MTA-STS policy (./router.ts). */
  private readonly router: DestinationRouter;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly opts: DeliveryOptions = DEFAULT_DELIVERY_OPTIONS,
  ) {
    this.builder = new MessageBuilder(deps, opts.buildsAtOnce);
    this.sender = new SmtpSender({ heloName: new URL(deps.config.baseUrl).hostname, maxConnectionsPerHost: opts.maxConnectionsPerHost, extraCa: deps.extraCa });
    this.shaping = new Shaping({
      db: deps.pool,
      clock: deps.clock,
      worker: this.workerId,
      maxConnectionsPerWorker: opts.maxConnectionsPerHost,
      sources: deps.config.deliveryPolicy.identity.sources.map((src) => src.name),
      onSlotClosed: (dest, slot, gone) => this.sender.closeSlot(Shaping.slotKey(dest, slot), gone),
      onError: (err) => deps.log.error({ err }, 'traffic shaping lease failed; retrying'),
    });
    this.shaping.start();
    this.router = new DestinationRouter({ ...deps, shaping: this.shaping });
    this.claimer = new Claimer({ pool: deps.pool, clock: deps.clock, workerId: this.workerId, leaseMs: opts.leaseMs, shaping: this.shaping, relay: deps.config.delivery === 'relay' });
    this.outcomes = new GroupCommit<Step, void>(
      async (batch) => {
        await recordSteps(deps.pool, this.workerId, deps.clock.now(), batch);
        return batch.map(() => undefined);
      },
      { maxBatch: MAX_OUTCOMES_PER_WRITE, maxInFlight: 1, gather: OUTCOME_GATHER },
    );
  }

  /**
   * While `hold` is true, claims only messages of no campaign. The worker holds campaign mail
   * while its process fans a campaign out: building and signing take the cores the fan-out's
   * batches need, and the campaign is fully queued sooner (docs/campaigns.md); transactional
   * and automation mail keeps its full share of the engine meanwhile. Returns whether that
   * changed anything.
   */
  holdCampaigns(hold: boolean): boolean {
    return this.claimer.holdCampaigns(hold);
  }

  /** Messages claimed by refill and not yet recorded. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * The worker's loop step: a refilling claim. Messages are delivered without waiting for the
   * rest of their claim: while at least half of `batchSize` is free, due messages are claimed
   * to fill it up, and `onRoom` is called when the in-flight count falls back to half (of the
   * batch, or of what was in flight after the claim if that is less), so the
   * loop claims again while the other half is still being built and sent. (A whole claim
   * waiting for its slowest message left the cores idle at every claim's tail.) `onRoom` says
   * whether the last claim had drained the queue (Claimer.drained): the loop may then gather
   * announcements of new mail into the next claim rather than claim the few that came
   * meanwhile (./claim-pacing.ts). Returns how
   * many it claimed; a failed outcome write is reported to `onError` and the lease brings
   * those messages back, as with runOnce.
   */
  async refill(onRoom: (drained: boolean) => void, onError: (err: unknown) => void): Promise<number> {
    if (!this.reclaimed) {
      this.reclaimed = true;
      await this.releaseDeadLeases();
    }
    const room = this.opts.batchSize - this.inFlight.size;
    // A destination whose queue here fell to three quarters of its cap claims at once, whatever the batch's room.
    const gateRoom = this.gateRoom;
    this.gateRoom = false;
    this.wake = onRoom;
    this.roomArmed = true;
    if (room < Math.ceil(this.opts.batchSize / 2) && !(gateRoom && room > 0)) return 0;
    const claimed = await this.claimer.claim(room, this.inFlight.size);
    this.lastClaimFull = claimed.length >= room;
    for (const m of claimed) {
      const delivery: Promise<void> = this.deliverAndSubmit(m)
        .catch(onError)
        .finally(() => {
          this.inFlight.delete(delivery);
          // At or below half, not only at it: a claim made while the count was already low
          // must still announce room when its messages finish.
          if (this.roomArmed && this.inFlight.size <= this.lowWater) {
            this.roomArmed = false;
            onRoom(this.claimer.drained);
          }
        });
      this.inFlight.add(delivery);
    }
    // Half of what is in flight now, not of the batch: when shaping caps a destination below
    // the batch (its gate's cap, Shaping.claimRooms), in-flight never reached the batch's half
    // and every single completion called for a claim of a message or two.
    this.lowWater = Math.min(Math.floor(this.opts.batchSize / 2), Math.floor(this.inFlight.size / 2));
    return claimed.length;
  }

  /**
   * Whether the last refill claimed all the room it had: more may be due at once. A shorter
   * claim found the queue empty or its destinations capped; the loop claims again when deliveries
   * make room (onRoom), a destination drains to three quarters of its cap, or new mail is notified.
   */
  get lastClaimWasFull(): boolean {
    return this.lastClaimFull;
  }

  /** Waits for every delivery `refill` started (shutdown). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** One claim → deliver → record cycle, waiting for all of it. Returns how many messages it handled. */
  async runOnce(): Promise<number> {
    if (!this.reclaimed) {
      this.reclaimed = true;
      await this.releaseDeadLeases();
    }
    const claimed = await this.claimer.claim(this.opts.batchSize, 0);
    if (claimed.length === 0) return 0;
    // Each message's outcome is written as soon as it is known (with whatever else finished
    // meanwhile); a failed write fails the cycle, and the lease brings those messages back.
    await Promise.all(claimed.map((m) => this.deliverAndSubmit(m)));
    return claimed.length;
  }

  async close(): Promise<void> {
    await this.drain();
    holderGone(this.workerId);
    await this.shaping.close().catch((err) => this.deps.log.warn({ err }, 'could not release shaping leases; they expire'));
    await this.sender.close();
  }

  /**
   * Delivers a claimed message and submits its outcome for the next group write. It stops
   * being held for its destination once its delivery is over, not once the outcome is written:
   * what it occupied (a place in its gate's queue, a connection) is free then, and the outcome
   * may wait up to OUTCOME_GATHER's time for its group. Counted as held until written, it made
   * the next claim of its destination smaller by the messages waiting to be written.
   */
  private async deliverAndSubmit(m: MessageRow): Promise<void> {
    let step: Step;
    try {
      step = await this.deliverOne(m);
    } finally {
      this.claimer.unhold(m);
    }
    await this.outcomes.submit(step);
  }

  /** Releases leases of dead predecessors on this host (./lease-holders.ts). Returns how many. */
  releaseDeadLeases(): Promise<number> {
    return releaseDeadLeases(this.deps.pool, this.workerId, this.deps.clock.now(), this.deps.log);
  }

  /**
   * One message, top to bottom: route it to its destination, build and sign it, take a turn
   * of the destination's shaping (a connection slot and a token), transmit, read what the
   * reply asks (throttle, greylisting), and plan its next state.
   */
  private async deliverOne(msg: MessageRow): Promise<Step> {
    const now = () => this.deps.clock.now();
    const rcpt = envelopeAddress(msg.to_email);
    // Refused at the API; a row that got here by another path is our fault, not the address's.
    if (rcpt === null) return planOutcome(msg, notSentByUs('the recipient\'s local part is not ASCII and would need SMTPUTF8, which Postline does not send'), now());
    if (this.deps.config.delivery === 'capture') return planOutcome(msg, await this.capture(msg), now());
    const route = await this.router.route(msg);
    if ('kind' in route) return planOutcome(msg, route, now());
    // Its source's warm-up cap for today is reached: not an attempt, the message waits.
    if ('waitUntil' in route) return { release: { id: msg.id, nextAttemptAt: route.waitUntil } };
    const { gate, hosts, source, sts } = route;
    if (gate.closed(now().getTime())) return { release: { id: msg.id, nextAttemptAt: new Date(Math.max(gate.suspendedUntil, now().getTime())) } };
    gate.pending++;
    try {
      let built: BuiltMessage;
      try {
        built = (await this.builder.buildInTurn(msg)).built;
      } catch (err) {
        // Our own failure (domain deleted, key unreadable): fail the message, never the address.
        this.deps.log.error({ err, messageId: msg.id }, 'could not build message');
        return planOutcome(msg, notSentByUs((err as Error).message), now());
      }
      const turn = await gate.turn();
      if ('closedUntil' in turn) return { release: { id: msg.id, nextAttemptAt: turn.closedUntil } };
      const policy = gate.policy;
      const via = { slot: Shaping.slotKey(gate.dest, turn.slot) };
      const envelope = { from: built.returnPath, to: rcpt };
      // Right before the message goes on its connection (and before each further MX host): a
      // destination suspended since the turn was given (a throttle reply on another of its
      // connections, here or in another worker) gets nothing more; the message goes back untried.
      const send = (target: SmtpTarget) => {
        if (gate.suspended()) throw new HeldBack(new Date(gate.suspendedUntil));
        return this.sender.send(target, envelope, built.raw, via);
      };
      let sent: { result: DeliveryResult; tls: TlsSessionResult[] } | null = null;
      let cause: Promise<DeferralCause | undefined> | undefined;
      try {
        if (hosts === null) {
          sent = { result: await send({ kind: 'relay', url: this.deps.config.smtpRelay! }), tls: [] };
        } else {
          // MX hosts in the order and with the TLS the domain's MTA-STS policy allows, from the source address.
          const { result, sessions } = await deliverWithSts({
            domain: msg.to_domain,
            hosts,
            port: this.deps.config.mxPort,
            source: source ? { address: source.address, ehlo: source.ehlo } : undefined,
            lookup: sts,
            send,
            isFinal: (r) => readReply(r, policy)?.kind === 'throttle',
          });
          sent = { result, tls: sessions };
        }
      } catch (err) {
        if (err instanceof HeldBack) return { release: { id: msg.id, nextAttemptAt: err.until } };
        throw err;
      } finally {
        // A throttle reply suspends the destination (synchronously, in this worker) before the
        // slot is handed on: the message waiting for it must not go out on this connection.
        if (sent) cause = this.causeOf(sent.result, gate.dest);
        gate.done(turn.slot, sent !== null);
      }
      const { result, tls } = sent;
      const planned: Attempted = planOutcome(msg, result, now(), await cause);
      return { ...planned, ...(source ? { source } : {}), ...(tls.length ? { tls: tls.map((t) => ({ ...t, domain: msg.to_domain })) } : {}) };
    } finally {
      gate.pending--;
      // The claim left this destination alone while it was full: wake it when a quarter of its
      // cap has gone. At half, the half left was sent (~60 ms at 700/s on 10 connections)
      // before the next claim's messages had been claimed, routed and built, and the gate's
      // connections sat idle between claims (docs/decisions/0053-*.md).
      if (gate.pending === Math.floor((gate.cap * 3) / 4)) {
        this.gateRoom = true;
        this.wake?.(this.claimer.drained);
      }
    }
  }

  /** Throttled: the destination is suspended for every worker and the message waits for it. Greylisted: retried after greylistRetry. */
  private async causeOf(result: DeliveryResult, dest: Destination): Promise<DeferralCause | undefined> {
    const ask = readReply(result, dest.policy);
    if (ask === null || result.kind === 'delivered') return undefined;
    if (ask.kind === 'greylist') return { reason: 'greylisted', until: new Date(this.deps.clock.now().getTime() + dest.policy.greylistRetryMs) };
    const until = await this.shaping.throttle(dest, ask.rule.suspendMs, result.response);
    this.deps.log.warn({ destination: dest.key, until, reply: result.response }, 'destination throttled us; suspended');
    return { reason: 'throttled', until, rule: ask.rule.match };
  }

  private async capture(msg: MessageRow): Promise<DeliveryResult> {
    try {
      const { built, now } = await this.builder.buildInTurn(msg);
      await captureMessage(this.deps.pool, { id: msg.id, accountId: msg.account_id, envelopeFrom: built.returnPath, envelopeTo: msg.to_email, subject: msg.subject, raw: built.raw, at: now });
      return { kind: 'delivered', response: '250 captured locally (POSTLINE_DELIVERY=capture)', mx: null };
    } catch (err) {
      this.deps.log.error({ err, messageId: msg.id }, 'could not build message');
      return notSentByUs((err as Error).message);
    }
  }
}

