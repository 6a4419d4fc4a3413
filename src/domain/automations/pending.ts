import { withTransaction, type Pool } from '../../db/pool.js';
import { takePendingTriggers } from '../../db/queries/automations/pending.js';
import { AppError } from '../../errors.js';
import { checkTriggerInput, triggerEvents, type PendingTrigger } from './trigger.js';

/**
 * Trigger work queued by bulk writes (migration 020): an import queues `subscriber.created`
 * for its new subscribers in the transaction of each batch, and the worker starts the runs
 * here, a batch of queued triggers per transaction through the same triggerEvents as the API
 * (same filters, reentry and per-address lock). Taking the rows and starting their runs
 * commit together, so a killed worker neither loses nor repeats one.
 */
export const PENDING_BATCH = 500;

export async function runPendingTriggers(pool: Pool, now: () => Date, limit = PENDING_BATCH): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const rows = await takePendingTriggers(tx, limit);
    const at = now();
    const batch: PendingTrigger[] = [];
    for (const r of rows) {
      const input = { event: r.event, email: r.email, data: r.data };
      try {
        batch.push({ accountId: r.account_id, input, emailKey: checkTriggerInput(input), now: at });
      } catch (err) {
        // As for any built-in event: an address the trigger refuses starts nothing.
        if (!(err instanceof AppError)) throw err;
      }
    }
    await triggerEvents(tx, batch);
    return rows.length;
  });
}
