import { withTransaction, type Pool } from '../../db/pool.js';
import { addStepStats, type StepStatsDelta } from '../../db/queries/automations/definitions.js';
import { markSendEngagement, takeQueuedEvents } from '../../db/queries/automations/runs.js';
import { fireBuiltInEvent } from './trigger.js';

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
    for (const e of events) {
      if (e.message_id) {
        const send = await markSendEngagement(tx, e.message_id, e.type, e.occurred_at);
        if (send) {
          const field = e.type === 'delivered' ? 'delivered' : e.type === 'open' ? 'opened' : 'clicked';
          stats.push({ automationId: send.automation_id, path: send.path, [field]: 1 });
        }
      }
      if (e.type === 'open' || e.type === 'click') {
        const data = { messageId: e.message_id, ...(e.type === 'click' && e.url ? { url: e.url } : {}) };
        await fireBuiltInEvent(tx, e.account_id, BUILT_IN[e.type], e.email, data, now());
      }
    }
    await addStepStats(tx, stats);
    return events.length;
  });
}
