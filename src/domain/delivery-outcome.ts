import type { MessageRow } from '../db/queries/messages.js';
import type { DeliveryResult } from '../mail/classify.js';
import type { MessageOutcome } from '../queue/messages.js';
import type { NewEvent } from './events.js';

/** DESIGN.md §8: about 1 min, 5 min, 15 min, 1 h, 4 h, then every 8 h, for up to 72 h. */
export const RETRY_SCHEDULE_SECONDS = [60, 300, 900, 3600, 14_400, 28_800];
export const RETRY_WINDOW_MS = 72 * 3600 * 1000;
/** A reply's own "try again in N" hint is honoured within these bounds. */
const HINT_MIN_S = 60;
const HINT_MAX_S = 28_800;

export interface PlannedOutcome {
  outcome: MessageOutcome;
  event: NewEvent;
  /** Suppress the recipient (hard bounce that was not our fault). */
  suppress: boolean;
}

export function retryDelaySeconds(attempts: number, hint?: number): number {
  if (hint !== undefined) return Math.min(HINT_MAX_S, Math.max(HINT_MIN_S, hint));
  return RETRY_SCHEDULE_SECONDS[Math.min(Math.max(attempts, 1), RETRY_SCHEDULE_SECONDS.length) - 1];
}

/**
 * Turns one delivery result into the message's next state and the event that says so
 * (Postal-style: one result value in, one decision out). A deferral past the 72 h window
 * becomes a soft bounce; a hard bounce suppresses the recipient unless the failure was ours
 * (authentication, reputation), in which case the message fails without blaming the address.
 */
export function planOutcome(msg: MessageRow, result: DeliveryResult, now: Date): PlannedOutcome {
  const data: Record<string, unknown> = { response: result.response, mx: result.mx, attempt: msg.attempts };
  const base = { id: msg.id, response: result.response, mx: result.mx, deliveredAt: null, nextAttemptAt: now };
  const event = (type: NewEvent['type'], extra: Record<string, unknown> = {}): NewEvent => ({
    accountId: msg.account_id,
    messageId: msg.id,
    type,
    email: msg.to_email,
    data: { ...data, ...extra },
    occurredAt: now,
  });
  switch (result.kind) {
    case 'delivered':
      return { outcome: { ...base, status: 'delivered', deliveredAt: now }, event: event('delivered'), suppress: false };
    case 'hard_bounce':
      return {
        outcome: { ...base, status: result.ourFault ? 'failed' : 'bounced' },
        event: event('hard_bounce', { code: result.code, enhancedCode: result.enhanced, ourFault: result.ourFault }),
        suppress: !result.ourFault,
      };
    case 'deferred': {
      const delay = retryDelaySeconds(msg.attempts, result.retryAfterSeconds);
      const next = new Date(now.getTime() + delay * 1000);
      const first = msg.first_attempt_at ?? now;
      if (next.getTime() - first.getTime() > RETRY_WINDOW_MS) {
        return {
          outcome: { ...base, status: 'failed' },
          event: event('soft_bounce', { code: result.code, enhancedCode: result.enhanced, reason: 'retry window of 72 hours exhausted' }),
          suppress: false,
        };
      }
      return {
        outcome: { ...base, status: 'deferred', nextAttemptAt: next },
        event: event('deferred', { code: result.code, enhancedCode: result.enhanced, nextAttemptAt: next.toISOString() }),
        suppress: false,
      };
    }
  }
}
