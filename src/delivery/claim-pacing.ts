/**
 * When new mail is announced (NOTIFY postline_messages), claim now or a moment later.
 *
 * Every accept statement wakes the workers, so while the API accepts, a worker was woken every
 * few milliseconds and each wake-up was a claim of the few messages that had arrived since the
 * last one: each claim's fixed cost (statements, their planning and round trips, the gates' and
 * claim rooms' bookkeeping) was shared by a handful of messages, where the engine alone (all
 * mail accepted first) claims tens at a time (docs/decisions/0058-claims-paced-while-busy.md).
 *
 * An idle worker (nothing in flight) claims at once: mail accepted on a quiet system leaves as
 * soon as it is committed. A busy worker gathers the announcements of NEW_MAIL_GATHER_MS into
 * one claim; its connections have messages to send meanwhile, and its own deliveries also
 * claim as they make room (DeliveryEngine.refill's onRoom), which makes a pending gathering moot.
 */
export const NEW_MAIL_GATHER_MS = 50;

/** Timers, injectable so that tests move time themselves. Returns a cancel function. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const realSchedule: Schedule = (fn, ms) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

export class ClaimPacing {
  private cancelGathering: (() => void) | null = null;

  constructor(
    private readonly opts: {
      /** Messages the worker is delivering now. */
      inFlight: () => number;
      /** Runs the claim (the delivery loop's wake-up). */
      claim: () => void;
      gatherMs?: number;
      schedule?: Schedule;
    },
  ) {}

  /** New mail was announced, or a gate has room again after a claim that drained the queue (DeliveryEngine.refill). */
  soon(): void {
    if (this.opts.inFlight() === 0) {
      this.claimed();
      this.opts.claim();
      return;
    }
    if (this.cancelGathering) return;
    this.cancelGathering = (this.opts.schedule ?? realSchedule)(() => {
      this.cancelGathering = null;
      this.opts.claim();
    }, this.opts.gatherMs ?? NEW_MAIL_GATHER_MS);
  }

  /** A claim is starting for another reason: it takes what was announced so far. */
  claimed(): void {
    this.cancelGathering?.();
    this.cancelGathering = null;
  }

  stop(): void {
    this.claimed();
  }
}
