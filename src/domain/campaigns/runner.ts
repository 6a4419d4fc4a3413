import type { Pool } from '../../db/pool.js';
import { withTransaction } from '../../db/pool.js';
import { hasPendingMessages, lockCampaign, selectSendingCampaignIds, setCampaignStatus } from '../../db/queries/campaigns/campaigns.js';
import { selectFannedOutCampaigns, startDueCampaigns } from '../../db/queries/campaigns/fanout.js';
import { selectAccountsSendingCampaigns } from '../../db/queries/stats.js';
import { evaluateHealth } from '../stats/account-health.js';
import { runFanOut, type FanOutDeps } from './fanout.js';
import { pauseLocked } from './lifecycle.js';

export const AT_RISK_PAUSE_REASON = 'account_at_risk';

export interface CampaignStepResult {
  started: number;
  pausedAtRisk: number;
  messages: number;
  finished: number;
}

/**
 * One pass of the campaign runner (the worker role's `campaigns` loop): start scheduled
 * campaigns that are due, pause the sending campaigns of accounts whose health turned
 * at_risk, fan out what is waiting, and mark campaigns sent once nothing is left unsent.
 */
export async function runCampaignStep(deps: FanOutDeps): Promise<CampaignStepResult> {
  const started = (await startDueCampaigns(deps.pool, deps.now())).length;
  const pausedAtRisk = await pauseAtRiskAccounts(deps.pool, deps.now());
  let messages = 0;
  try {
    for (;;) {
      const n = await runFanOut(deps);
      if (n === null) break;
      messages += n;
    }
  } finally {
    deps.onFanOut?.(false);
  }
  const finished = await finishCampaigns(deps.pool, deps.now());
  return { started, pausedAtRisk, messages, finished };
}

/** Sending campaigns of at-risk (unacknowledged) accounts are paused with the reason in their report. */
export async function pauseAtRiskAccounts(pool: Pool, now: Date): Promise<number> {
  let paused = 0;
  for (const accountId of await selectAccountsSendingCampaigns(pool)) {
    const health = await evaluateHealth(pool, accountId, now);
    if (!health.sendingBlocked) continue;
    paused += await withTransaction(pool, async (tx) => {
      let n = 0;
      for (const id of await selectSendingCampaignIds(tx, accountId)) {
        const c = await lockCampaign(tx, accountId, id);
        if (c?.status !== 'sending') continue;
        await pauseLocked(tx, c, now, AT_RISK_PAUSE_REASON);
        n++;
      }
      return n;
    });
  }
  return paused;
}

/** A campaign whose fan-out is done and that has nothing unsent left is `sent`. */
export async function finishCampaigns(pool: Pool, now: Date): Promise<number> {
  let finished = 0;
  for (const c of await selectFannedOutCampaigns(pool)) {
    finished += await withTransaction(pool, async (tx) => {
      const row = await lockCampaign(tx, c.account_id, c.id);
      if (row?.status !== 'sending' || !row.fanout_done || (await hasPendingMessages(tx, c.id))) return 0;
      await setCampaignStatus(tx, c.id, 'sent', now, { finished: true });
      return 1;
    });
  }
  return finished;
}
