import type { Queryable } from '../../db/pool.js';
import { selectDailyCounters, setHealthAcknowledged, upsertHealth } from '../../db/queries/stats.js';
import { AppError } from '../../errors.js';
import { addCounters, ratio, ZERO_COUNTS } from './counters.js';

/**
 * Sending health: hard-bounce and complaint rates over the recent window, at the thresholds
 * the large mailbox providers and ESPs publish (AWS SES review/at-risk: bounces 5 % / 10 %,
 * complaints 0.1 % / 0.5 %; Gmail's bulk-sender limit is 0.3 % spam). Below a minimum volume
 * the rates say nothing and the status is ok (as SES requires a representative volume).
 */
export const HEALTH_RULES = {
  windowDays: 7,
  minSent: 100,
  bounce: { warning: 0.05, atRisk: 0.1 },
  complaint: { warning: 0.001, atRisk: 0.005 },
} as const;

export type HealthStatus = 'ok' | 'warning' | 'at_risk';

export interface Health {
  status: HealthStatus;
  /** Hard bounces / sent over the window. */
  bounceRate: number;
  /** Complaints / delivered over the window. */
  complaintRate: number;
  sent: number;
  windowDays: number;
  thresholds: typeof HEALTH_RULES;
  atRiskSince: string | null;
  acknowledgedAt: string | null;
  /** True while at_risk and not acknowledged: campaigns cannot send or resume. */
  sendingBlocked: boolean;
}

function dayOf(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export function classify(bounceRate: number, complaintRate: number, sent: number): HealthStatus {
  if (sent < HEALTH_RULES.minSent) return 'ok';
  if (bounceRate >= HEALTH_RULES.bounce.atRisk || complaintRate >= HEALTH_RULES.complaint.atRisk) return 'at_risk';
  if (bounceRate >= HEALTH_RULES.bounce.warning || complaintRate >= HEALTH_RULES.complaint.warning) return 'warning';
  return 'ok';
}

/** Computes the account's health now (from the daily rollups) and records it. */
export async function evaluateHealth(db: Queryable, accountId: string, now: Date): Promise<Health> {
  const from = new Date(now.getTime() - (HEALTH_RULES.windowDays - 1) * 86_400_000);
  const days = await selectDailyCounters(db, accountId, '', dayOf(from), dayOf(now));
  const total = days.reduce(addCounters, ZERO_COUNTS);
  const bounceRate = ratio(total.hard_bounced, total.sent);
  const complaintRate = ratio(total.complaints, total.delivered);
  const status = classify(bounceRate, complaintRate, total.sent);
  const row = await upsertHealth(db, accountId, status, now);
  const blocked = status === 'at_risk' && (row.acknowledged_at === null || row.acknowledged_at < row.at_risk_since!);
  return {
    status,
    bounceRate,
    complaintRate,
    sent: total.sent,
    windowDays: HEALTH_RULES.windowDays,
    thresholds: HEALTH_RULES,
    atRiskSince: row.at_risk_since?.toISOString() ?? null,
    acknowledgedAt: row.acknowledged_at?.toISOString() ?? null,
    sendingBlocked: blocked,
  };
}

/** send / resume: refused while the account is at risk and has not acknowledged it. */
export async function assertCampaignSendingAllowed(db: Queryable, accountId: string, now: Date): Promise<void> {
  const h = await evaluateHealth(db, accountId, now);
  if (h.sendingBlocked) {
    throw new AppError(
      'account_at_risk',
      `sending health is at_risk (bounce rate ${h.bounceRate}, complaint rate ${h.complaintRate} over ${h.windowDays} days): ` +
        'acknowledge it with POST /api/v1/stats/health/acknowledge before sending campaigns',
      { extra: { health: h } },
    );
  }
}

/** POST /api/v1/stats/health/acknowledge: campaigns may send again for the rest of this at-risk episode. */
export async function acknowledgeHealth(db: Queryable, accountId: string, now: Date): Promise<Health> {
  await evaluateHealth(db, accountId, now);
  await setHealthAcknowledged(db, accountId, now);
  return evaluateHealth(db, accountId, now);
}
