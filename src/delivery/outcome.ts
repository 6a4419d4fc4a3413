import type { MessageRow } from '../db/queries/messages.js';
import type { DeliveryResult } from '../mail/classify.js';
import type { BounceVerdict } from '../mail/bounces/verdict.js';
import { bounceData } from '../domain/bounces/bounce-data.js';
import type { DeliveryEventType, MessageOutcome } from './queue.js';
import type { NewEvent } from '../domain/events.js';

/** docs/architecture.md#delivery: about 1 min, 5 min, 15 min, 1 h, 4 h, then every 8 h, for up to 72 h. */
export const RETRY_SCHEDULE_SECONDS = [60, 300, 900, 3600, 14_400, 28_800];
export const RETRY_WINDOW_MS = 72 * 3600 * 1000;
/** A reply's own "try again in N" hint is honoured within these bounds. */
const HINT_MIN_S = 60;
const HINT_MAX_S = 28_800;

export interface PlannedOutcome {
  outcome: MessageOutcome;
  /** Of the types whose counters the record statement writes itself (queue.ts, recordOutcomes). */
  event: NewEvent & { type: DeliveryEventType };
  /** Suppress the recipient: the address is dead (docs/bounces.md). */
  suppress: boolean;
  /** The verdict of a failure that ended the message (soft or hard bounce), else null. */
  bounce: BounceVerdict | null;
}

export function retryDelaySeconds(attempts: number, hint?: number): number {
  if (hint !== undefined) return Math.min(HINT_MAX_S, Math.max(HINT_MIN_S, hint));
  return RETRY_SCHEDULE_SECONDS[Math.min(Math.max(attempts, 1), RETRY_SCHEDULE_SECONDS.length) - 1];
}

/**
 * Turns one delivery result into the message's next state and the event that says so
 * (Postal-style: one result value in, one decision out). A permanent failure is a
 * hard_bounce only when the address is dead, and then suppresses it; any other permanent
 * failure is a soft_bounce that leaves the address alone — `failed` when the receiver
 * refused us (sender side), `bounced` otherwise. A deferral past the 72 h window becomes a
 * soft bounce with the last reply's reason (`expired` when the reply told nothing).
 */
/**
 * Why a failed attempt is retried at a set time rather than on the schedule: the provider
 * throttled us (its destination is suspended until then) or greylisted the message.
 */
export interface DeferralCause {
  reason: 'throttled' | 'greylisted';
  until: Date;
  /** The throttle rule that matched. */
  rule?: string;
}

export function planOutcome(msg: MessageRow, result: DeliveryResult, now: Date, cause?: DeferralCause): PlannedOutcome {
  const data: Record<string, unknown> = { response: result.response, mx: result.mx, attempt: msg.attempts };
  const base = { id: msg.id, response: result.response, mx: result.mx, deliveredAt: null, nextAttemptAt: now };
  const event = (type: DeliveryEventType, extra: Record<string, unknown> = {}): PlannedOutcome['event'] => ({
    accountId: msg.account_id,
    messageId: msg.id,
    type,
    email: msg.to_email,
    data: { ...data, ...extra },
    occurredAt: now,
  });
  // A throttle or greylisting reply is never a bounce: no bounce event, no suppression, no
  // soft-bounce run; the message waits for the suspension or the greylist retry.
  if (cause && result.kind !== 'delivered') {
    return {
      outcome: { ...base, status: 'deferred', nextAttemptAt: cause.until },
      event: event('deferred', {
        code: result.code, enhancedCode: result.enhanced, nextAttemptAt: cause.until.toISOString(), reason: cause.reason, ...(cause.rule ? { rule: cause.rule } : {}),
      }),
      suppress: false,
      bounce: null,
    };
  }
  switch (result.kind) {
    case 'delivered':
      return { outcome: { ...base, status: 'delivered', deliveredAt: now }, event: event('delivered'), suppress: false, bounce: null };
    case 'hard_bounce': {
      const v = result.verdict;
      const status = v.dead ? 'bounced' : v.side === 'sender' ? 'failed' : 'bounced';
      return {
        outcome: { ...base, status },
        event: event(v.dead ? 'hard_bounce' : 'soft_bounce', {
          code: result.code, enhancedCode: result.enhanced, ourFault: result.ourFault, bounce: bounceData(v, result.response, result.mx),
        }),
        suppress: v.dead,
        bounce: v,
      };
    }
    case 'deferred': {
      const delay = retryDelaySeconds(msg.attempts, result.retryAfterSeconds);
      const next = new Date(now.getTime() + delay * 1000);
      const first = msg.first_attempt_at ?? now;
      if (next.getTime() - first.getTime() > RETRY_WINDOW_MS) {
        const last = result.verdict;
        const v: BounceVerdict = { ...last, reason: last.reason === 'undefined' ? 'expired' : last.reason, permanent: true, dead: false };
        if (v.reason === 'expired') Object.assign(v, { side: 'recipient', ourFault: false });
        return {
          outcome: { ...base, status: 'failed' },
          event: event('soft_bounce', {
            code: result.code, enhancedCode: result.enhanced, reason: 'retry window of 72 hours exhausted', ourFault: v.ourFault, bounce: bounceData(v, result.response, result.mx),
          }),
          suppress: false,
          bounce: v,
        };
      }
      return {
        outcome: { ...base, status: 'deferred', nextAttemptAt: next },
        event: event('deferred', { code: result.code, enhancedCode: result.enhanced, nextAttemptAt: next.toISOString(), reason: 'backoff' }),
        suppress: false,
        bounce: null,
      };
    }
  }
}
