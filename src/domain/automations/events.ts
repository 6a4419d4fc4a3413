import { withTransaction, type Pool } from '../../db/pool.js';
import { addStepStats, type StepStatsDelta } from '../../db/queries/automations/definitions.js';
import { markSendEngagement, takeQueuedEvents } from '../../db/queries/automations/runs.js';
import { AppError } from '../../errors.js';
import { checkTriggerInput, triggerEvents, type PendingTrigger } from './trigger.js';

/**
 * What the engine learns from recorded events (the queue is filled by a trigger on events,
 * migration 014, whatever code path recorded them): the per-step delivered / opened / clicked
 * counters of automation sends, and the built-in email.opened / email.clicked triggers. An
 * open counts once per message (the first), as does a click.
 */
export const EVENT_BATCH = 500;

const BUILT_IN = { open: 'email.opened', click: 'email.clicked' } as const;

export async function handleAutomationEvents(pool: Pool, now: () => Date, limit = EVENT_BATCH): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const events = await takeQueuedEvents(tx, limit);
    const stats: StepStatsDelta[] = [];
    const triggers: PendingTrigger[] = [];
    const at = now();
    for (const e of events) {
      if (e.message_id) {
        const send = await markSendEngagement(tx, e.message_id, e.type, e.occurred_at);
        if (send) {
          const field = e.type === 'delivered' ? 'delivered' : e.type === 'open' ? 'opened' : 'clicked';
          stats.push({ automationId: send.automation_id, path: send.path, [field]: 1 });
        }
      }
      if (e.type === 'open' || e.type === 'click') {
        const input = { event: BUILT_IN[e.type], email: e.email, data: { messageId: e.message_id, ...(e.type === 'click' && e.url ? { url: e.url } : {}) } };
        try {
          triggers.push({ accountId: e.account_id, input, emailKey: checkTriggerInput(input), now: at });
        } catch (err) {
          // As for any built-in event: an address the trigger refuses starts nothing.
          if (!(err instanceof AppError)) throw err;
        }
      }
    }
    // The batch's built-in events in one go, in event order (triggerEvents: as one after the
    // other, address locks in one sorted statement).
    await triggerEvents(tx, triggers);
    await addStepStats(tx, stats);
    return events.length;
  });
}
