import pg from 'pg';
import type { Queryable } from '../../db/pool.js';
import {
  selectDailyCounters, selectHealthRow, selectSenderSideBounces, setHealthAcknowledged, upsertHealth, type HealthRow,
} from '../../db/queries/stats.js';
import { AppError } from '../../errors.js';
import { addCounters, ratio, ZERO_COUNTS } from './counters.js';

/**
 * The account's sending health — ONE definition behind both views of it (docs/stats.md#health):
 * `health` in GET /api/v1/stats (the campaign-pausing view, with its at-risk episode) and
 * GET /api/v1/account/health (the deliverability view, with sender-side bounces by reason).
 * Both read the same daily rollups (never events), judge the same three rates against the same
 * thresholds, and so always agree on the level.
 *
 * The thresholds are the ones large mailbox providers and ESPs publish: AWS SES review / at-risk
 * for bounces (5 % / 10 %) and complaints (0.1 % / 0.5 %; Gmail's bulk-sender limit of 0.3 %
 * lies between). Sender-side refusals (block lists, authentication, content: they never
 * suppress a recipient, docs/bounces.md) are judged at 2 % / 5 % of sends: at that level
 * receivers are refusing *us*, and a campaign would only deepen it. Below a minimum volume
 * rates say nothing and the level is ok (as SES requires a representative volume).
 */
export const HEALTH_RULES = {
  windowDays: 7,
  minSent: 100,
  bounce: { warning: 0.05, atRisk: 0.1 },
  complaint: { warning: 0.001, atRisk: 0.005 },
  senderSide: { warning: 0.02, atRisk: 0.05 },
} as const;

export type HealthLevel = 'ok' | 'warning' | 'at_risk';
type Rule = { warning: number; atRisk: number };

/** What the window's rollups say, with the rates and the level they give. */
export interface HealthMeasure {
  windowDays: number;
  /** First and last UTC day of the window (inclusive): today and the days before it. */
  fromDay: string;
  toDay: string;
  sent: number;
  delivered: number;
  hardBounces: number;
  softBounces: number;
  complaints: number;
  senderSide: { total: number; byReason: Record<string, number> };
  /** Hard bounces / sent. */
  bounceRate: number;
  /** Complaints / delivered (only delivered mail can be reported as spam). */
  complaintRate: number;
  /** Sender-side bounces / sent. */
  senderSideRate: number;
  level: HealthLevel;
  /** Each rate at or past its warning threshold, worst first within the order below. */
  findings: { code: 'sender_side_bounces' | 'hard_bounces' | 'complaints'; rate: number; level: Exclude<HealthLevel, 'ok'>; rule: Rule }[];
}

const DAY_MS = 86_400_000;

/**
 * Runs reads at once on a pool (each on its own connection: the read routes' latency), one
 * after the other on a transaction's client (which runs one query at a time anyway).
 */
async function inTurn<A, B>(db: Queryable, reads: readonly [() => Promise<A>, () => Promise<B>]): Promise<[A, B]> {
  if (db instanceof pg.Pool) return Promise.all([reads[0](), reads[1]()]);
  const a = await reads[0]();
  return [a, await reads[1]()];
}
const dayOf = (d: Date) => d.toISOString().slice(0, 10);

function levelOf(rate: number, rule: Rule): HealthLevel {
  return rate >= rule.atRisk ? 'at_risk' : rate >= rule.warning ? 'warning' : 'ok';
}

/** The level of three rates at a volume (docs/stats.md#health). */
export function classify(rates: { bounce: number; complaint: number; senderSide: number }, sent: number): HealthLevel {
  if (sent < HEALTH_RULES.minSent) return 'ok';
  const levels = [levelOf(rates.bounce, HEALTH_RULES.bounce), levelOf(rates.complaint, HEALTH_RULES.complaint), levelOf(rates.senderSide, HEALTH_RULES.senderSide)];
  return levels.includes('at_risk') ? 'at_risk' : levels.includes('warning') ? 'warning' : 'ok';
}

/** Measures the last `windowDays` UTC days (today included) from the rollups. Reads only. */
export async function measureHealth(db: Queryable, accountId: string, now: Date, windowDays: number = HEALTH_RULES.windowDays): Promise<HealthMeasure> {
  const toDay = dayOf(now);
  const fromDay = dayOf(new Date(now.getTime() - (windowDays - 1) * DAY_MS));
  const [days, reasons] = await inTurn(db, [
    () => selectDailyCounters(db, accountId, '', fromDay, toDay),
    () => selectSenderSideBounces(db, accountId, fromDay, toDay),
  ] as const);
  const total = days.reduce(addCounters, ZERO_COUNTS);
  const byReason = Object.fromEntries(reasons.map((r) => [r.reason, r.n]));
  const senderTotal = reasons.reduce((n, r) => n + r.n, 0);
  const bounceRate = ratio(total.hard_bounced, total.sent);
  const complaintRate = ratio(total.complaints, total.delivered);
  const senderSideRate = ratio(senderTotal, total.sent);
  const findings: HealthMeasure['findings'] = [];
  if (total.sent >= HEALTH_RULES.minSent) {
    for (const [code, rate, rule] of [
      ['sender_side_bounces', senderSideRate, HEALTH_RULES.senderSide],
      ['hard_bounces', bounceRate, HEALTH_RULES.bounce],
      ['complaints', complaintRate, HEALTH_RULES.complaint],
    ] as const) {
      const level = levelOf(rate, rule);
      if (level !== 'ok') findings.push({ code, rate, level, rule });
    }
  }
  return {
    windowDays, fromDay, toDay,
    sent: total.sent, delivered: total.delivered, hardBounces: total.hard_bounced, softBounces: total.soft_bounced, complaints: total.complaints,
    senderSide: { total: senderTotal, byReason },
    bounceRate, complaintRate, senderSideRate,
    level: classify({ bounce: bounceRate, complaint: complaintRate, senderSide: senderSideRate }, total.sent),
    findings,
  };
}

// ---------------------------------------------------------------------------------------
// The campaign-pausing view: `health` of GET /api/v1/stats, with its at-risk episode.

export interface Health {
  status: HealthLevel;
  bounceRate: number;
  complaintRate: number;
  senderSideRate: number;
  sent: number;
  windowDays: number;
  thresholds: typeof HEALTH_RULES;
  atRiskSince: string | null;
  acknowledgedAt: string | null;
  /** True while at_risk and not acknowledged: campaigns cannot send or resume. */
  sendingBlocked: boolean;
}

/**
 * The health with its episode. `record` (live callers) writes the episode row when the level
 * changed since it was last written — a read of an unchanged health writes nothing, so GET
 * /api/v1/stats stays a read; test keys pass false and nothing is written at all.
 */
export async function evaluateHealth(db: Queryable, accountId: string, now: Date, opts: { record: boolean } = { record: true }): Promise<Health> {
  const [m, stored] = await inTurn(db, [() => measureHealth(db, accountId, now), () => selectHealthRow(db, accountId)] as const);
  let row: Pick<HealthRow, 'at_risk_since' | 'acknowledged_at'> | null = stored;
  if (!stored || stored.status !== m.level) {
    if (opts.record) row = await upsertHealth(db, accountId, m.level, now);
    else row = { at_risk_since: m.level === 'at_risk' ? now : null, acknowledged_at: stored?.acknowledged_at ?? null };
  }
  const atRiskSince = m.level === 'at_risk' ? (row?.at_risk_since ?? now) : null;
  const acknowledgedAt = row?.acknowledged_at ?? null;
  return {
    status: m.level,
    bounceRate: m.bounceRate,
    complaintRate: m.complaintRate,
    senderSideRate: m.senderSideRate,
    sent: m.sent,
    windowDays: m.windowDays,
    thresholds: HEALTH_RULES,
    atRiskSince: atRiskSince?.toISOString() ?? null,
    acknowledgedAt: acknowledgedAt?.toISOString() ?? null,
    sendingBlocked: atRiskSince !== null && (acknowledgedAt === null || acknowledgedAt < atRiskSince),
  };
}

/** send / resume: refused while the account is at risk and has not acknowledged it. */
export async function assertCampaignSendingAllowed(db: Queryable, accountId: string, now: Date): Promise<void> {
  const h = await evaluateHealth(db, accountId, now);
  if (h.sendingBlocked) {
    throw new AppError(
      'account_at_risk',
      `sending health is at_risk (bounce rate ${h.bounceRate}, complaint rate ${h.complaintRate}, sender-side rate ${h.senderSideRate} ` +
        `over ${h.windowDays} days): acknowledge it with POST /api/v1/stats/health/acknowledge before sending campaigns`,
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

// ---------------------------------------------------------------------------------------
// The deliverability view: GET /api/v1/account/health (docs/bounces.md).

export interface DeliverabilityHealth {
  windowDays: number;
  from: string;
  to: string;
  sent: number;
  delivered: number;
  /** Dead addresses (suppressed). */
  hardBounces: number;
  /** Every other final failure, any side. */
  softBounces: number;
  complaints: number;
  senderSide: { total: number; rate: number; byReason: Record<string, number> };
  hardBounceRate: number;
  complaintRate: number;
  /** The same level as `health.status` of GET /api/v1/stats; `critical` is its `at_risk`. */
  status: 'ok' | 'warning' | 'critical';
  issues: { code: string; message: string }[];
}

const round4 = (n: number) => Math.round(n * 10_000) / 10_000;
const percent = (n: number) => `${(n * 100).toFixed(2)} %`;

export async function deliverabilityHealth(db: Queryable, accountId: string, now: Date, windowDays: number): Promise<DeliverabilityHealth> {
  const m = await measureHealth(db, accountId, now, windowDays);
  const top = Object.entries(m.senderSide.byReason).sort((a, b) => b[1] - a[1]).map(([r]) => r).slice(0, 3).join(', ');
  const what = (code: HealthMeasure['findings'][number]['code'], rate: number) =>
    code === 'sender_side_bounces' ? `receivers refused our mail (${top || 'sender side'}): ${percent(rate)} of sent mail`
    : code === 'hard_bounces' ? `addresses that do not exist: ${percent(rate)} of sent mail`
    : `spam complaints: ${percent(rate)} of delivered mail`;
  return {
    windowDays,
    from: `${m.fromDay}T00:00:00.000Z`,
    to: now.toISOString(),
    sent: m.sent,
    delivered: m.delivered,
    hardBounces: m.hardBounces,
    softBounces: m.softBounces,
    complaints: m.complaints,
    senderSide: { total: m.senderSide.total, rate: round4(m.senderSideRate), byReason: m.senderSide.byReason },
    hardBounceRate: round4(m.bounceRate),
    complaintRate: round4(m.complaintRate),
    status: m.level === 'at_risk' ? 'critical' : m.level,
    issues: m.findings.map((f) => ({
      code: f.code,
      message: `${what(f.code, f.rate)} in the last ${windowDays} days ` +
        `(${f.level === 'at_risk' ? 'critical' : 'warning'} at ${(f.level === 'at_risk' ? f.rule.atRisk * 100 : f.rule.warning * 100).toFixed(1)} %)`,
    })),
  };
}
