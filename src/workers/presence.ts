/**
 * Whether a background loop has anything to work for at all (an active webhook, an
 * automation), known without a query per wake-up. The webhook dispatcher and the automation
 * event handler wake on every `postline_events` notification, that is after every batch of
 * delivery outcomes; with no hook and no automation configured, each wake-up was a query (and
 * the event handler's a transaction) finding nothing: ~400 of a worker's ~3,100 queries for
 * 3,000 messages (docs/architecture.md#background-jobs-one-claimlease-pattern).
 *
 * The answer is read once and trusted for `maxAgeMs`; whatever makes something appear (a hook
 * created or re-enabled, an automation created) notifies a channel whose handler calls
 * `changed()`, so "none" is read again before the next wake-up is skipped. A wake-up is only
 * ever skipped on a fresh "none": every loop still polls on its timer, so a notification lost
 * costs at most that poll's latency, never work.
 */
import type { Notifications } from './notifications.js';

/** How long an answer is trusted without a change notified: a lost notification costs no more (and the loops poll every second anyway). */
export const PRESENCE_MAX_AGE_MS = 5_000;

export class Presence {
  private known: boolean | null = null;
  private readAt = 0;
  /** Bumped by changed(): a read that started before a change must not be trusted after it. */
  private generation = 0;
  private reading = false;

  constructor(
    private readonly read: () => Promise<boolean>,
    private readonly opts: { maxAgeMs: number; nowMs?: () => number; onError?: (err: unknown) => void },
  ) {}

  /** Something may have appeared: the next question reads again. */
  changed(): void {
    this.generation++;
    this.known = null;
  }

  /**
   * False only on a fresh "none" read since the last change; otherwise true, and a read is
   * started in the background if the answer is unknown or old.
   */
  mayExist(): boolean {
    const now = (this.opts.nowMs ?? Date.now)();
    const fresh = this.known !== null && now - this.readAt < this.opts.maxAgeMs;
    if (!fresh) this.refresh(now);
    return !(fresh && this.known === false);
  }

  private refresh(now: number): void {
    if (this.reading) return;
    this.reading = true;
    const generation = this.generation;
    this.read()
      .then((exists) => {
        if (generation !== this.generation) return;
        this.known = exists;
        this.readAt = now;
      })
      .catch((err) => this.opts.onError?.(err))
      .finally(() => (this.reading = false));
  }
}

/**
 * Wires a loop that new events wake to a Presence: `postline_events` wakes it only while
 * `present` may be true; `changedChannel` (something appeared) asks again and wakes it.
 */
export function wakeOnEventsWhilePresent(
  notifications: Notifications,
  opts: { present: () => Promise<boolean>; changedChannel: string; wake: () => void; onError: (err: unknown) => void },
): void {
  const presence = new Presence(opts.present, { maxAgeMs: PRESENCE_MAX_AGE_MS, onError: opts.onError });
  notifications.on('postline_events', () => {
    if (presence.mayExist()) opts.wake();
  });
  notifications.on(opts.changedChannel, () => {
    presence.changed();
    opts.wake();
  });
}
