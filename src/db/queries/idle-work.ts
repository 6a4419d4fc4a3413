import type { Queryable } from '../pool.js';

/** Which of the polled background loops have anything to do now (selectIdleWork). */
export interface IdleWork {
  /** Automation runs due (of active automations): what claimDueRuns would take. */
  automationRuns: boolean;
  /** Triggers queued by bulk writes: what takePendingTriggers would take. */
  pendingTriggers: boolean;
  /** Double opt-in mails to send: what selectPendingConfirmations would take. */
  confirmations: boolean;
  /** Campaigns sending, or scheduled and due: every step of runCampaignStep acts only on those. */
  campaigns: boolean;
}

/**
 * One statement, no transaction, that answers for four loops whether their claim would find
 * anything: three loops' claims are a transaction each (BEGIN, a locking read, COMMIT) that, on
 * a worker with no automation and no double opt-in, found nothing every second, and the
 * campaign step's are five statements
 * (docs/decisions/0046-worker-statements-planned-once.md). Each condition is the claim's own
 * (a row it would skip as locked still counts: the loop then runs and finds nothing, as before).
 */
export async function selectIdleWork(db: Queryable, now: Date): Promise<IdleWork> {
  const { rows } = await db.query<{ runs: boolean; pending: boolean; confirmations: boolean; campaigns: boolean }>({
    name: 'postline-idle-work',
    text: `SELECT EXISTS (SELECT 1 FROM automation_runs r JOIN automations a ON a.id = r.automation_id AND a.status = 'active'
                           WHERE r.due_at <= $1) AS runs,
                  EXISTS (SELECT 1 FROM automation_pending_triggers) AS pending,
                  EXISTS (SELECT 1 FROM subscriber_confirmations c JOIN subscribers s ON s.id = c.subscriber_id AND s.status = 'unconfirmed'
                           WHERE c.sent_at IS NULL) AS confirmations,
                  EXISTS (SELECT 1 FROM campaigns WHERE status = 'sending' OR (status = 'scheduled' AND scheduled_at <= $1)) AS campaigns`,
    values: [now],
  });
  return { automationRuns: rows[0].runs, pendingTriggers: rows[0].pending, confirmations: rows[0].confirmations, campaigns: rows[0].campaigns };
}
