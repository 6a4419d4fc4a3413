import type { Queryable } from '../../db/pool.js';
import { selectCampaign } from '../../db/queries/campaigns/campaigns.js';
import { monthlyUsage } from '../../db/queries/messages.js';
import { selectDailyCounters, type CounterRow } from '../../db/queries/stats.js';
import { invalid } from '../../errors.js';
import { hasPrefix } from '../../ids.js';
import { monthOf, quotaResetsAt } from '../sending/sending.js';
import { addCounters, ratesOf, toCounts, ZERO_COUNTS, type Counts, type Rates } from './counters.js';
import { evaluateHealth, type Health } from './account-health.js';

export const STATS_DEFAULT_DAYS = 30;
export const STATS_MAX_DAYS = 366;
const DAY_MS = 86_400_000;

export interface StatsQuery {
  from?: string;
  to?: string;
  tag?: string;
  campaignId?: string;
}

export interface AccountStats {
  from: string;
  to: string;
  filter: { tag: string | null; campaignId: string | null };
  counts: Counts;
  rates: Rates;
  quota: { used: number; limit: number | null; resetsAt: string };
  daily: ({ date: string } & Counts)[];
  health: Health;
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

function parseDay(field: string, v: string | undefined, fallback: Date): Date {
  if (v === undefined) return new Date(`${dayOf(fallback)}T00:00:00.000Z`);
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw invalid(field, 'must be an ISO 8601 date or date-time');
  return new Date(`${dayOf(d)}T00:00:00.000Z`);
}

/**
 * This month's accepted messages, API and campaign alike. An account with a quota keeps an exact
 * counter (the send gate); one without skips it, so that its sends do not queue on one counter
 * row (db/queries/messages.ts), and its use is the month's `sent` rollups instead.
 */
async function quotaUsed(db: Queryable, accountId: string, now: Date, monthlyQuota: number | null): Promise<number> {
  const month = monthOf(now);
  if (monthlyQuota !== null) return monthlyUsage(db, accountId, month);
  const rows = await selectDailyCounters(db, accountId, '', month, dayOf(now));
  return rows.reduce((n, r) => n + Number(r.sent), 0);
}

/**
 * GET /api/v1/stats: the account's counts and rates between two UTC days (inclusive; default the
 * last 30 days), for everything, one tag or one campaign, with a daily series, the quota and the
 * sending health. Reads only the daily rollups (≤ 366 days × 4 shards of one scope).
 */
export async function accountStats(
  db: Queryable,
  accountId: string,
  q: StatsQuery,
  now: Date,
  monthlyQuota: number | null,
  opts: { record: boolean } = { record: true },
): Promise<AccountStats> {
  const to = parseDay('to', q.to, now);
  const from = parseDay('from', q.from, new Date(to.getTime() - (STATS_DEFAULT_DAYS - 1) * DAY_MS));
  if (from > to) throw invalid('from', 'must not be after to');
  const days = Math.round((to.getTime() - from.getTime()) / DAY_MS) + 1;
  if (days > STATS_MAX_DAYS) throw invalid('from', `the range must be at most ${STATS_MAX_DAYS} days`);
  if (q.tag !== undefined && q.campaignId !== undefined) throw invalid('tag', 'filter by tag or by campaignId, not both');
  if (q.campaignId !== undefined && !(hasPrefix(q.campaignId, 'cmp') && (await selectCampaign(db, accountId, q.campaignId)))) {
    throw invalid('campaignId', `unknown campaign ${q.campaignId}`);
  }
  const scope = q.campaignId !== undefined ? `c:${q.campaignId}` : q.tag !== undefined ? `t:${q.tag}` : '';
  const [rows, used, health] = await Promise.all([
    selectDailyCounters(db, accountId, scope, dayOf(from), dayOf(to)),
    quotaUsed(db, accountId, now, monthlyQuota),
    evaluateHealth(db, accountId, now, opts),
  ]);
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const daily: AccountStats['daily'] = [];
  let total: CounterRow = ZERO_COUNTS;
  for (let i = 0; i < days; i++) {
    const date = dayOf(new Date(from.getTime() + i * DAY_MS));
    const row = byDay.get(date) ?? ZERO_COUNTS;
    total = addCounters(total, row);
    daily.push({ date, ...toCounts(row) });
  }
  const counts = toCounts(total);
  return {
    from: dayOf(from),
    to: dayOf(to),
    filter: { tag: q.tag ?? null, campaignId: q.campaignId ?? null },
    counts,
    rates: ratesOf(counts),
    quota: { used, limit: monthlyQuota, resetsAt: quotaResetsAt(now).toISOString() },
    daily,
    health,
  };
}
