import type { Queryable } from '../pool.js';

/**
 * Reads of the rollups migration 013 maintains (trigger events_rollup). Each statement sums a
 * handful of counter rows — at most days × 4 shards of one scope, or 4 shards of one
 * campaign — and never reads events.
 */

/**
 * The counters every rollup scope holds (campaign_stats and stats_daily repeat this column
 * block per table in migration 013; in TS it is this one list, and the row, zero and API
 * shapes below are derived from it).
 */
export const COUNTER_COLUMNS = [
  'sent', 'delivered', 'deferred', 'hard_bounced', 'soft_bounced', 'complaints', 'unsubscribes', 'opens', 'unique_opens',
  'machine_opens', 'clicks', 'unique_clicks',
] as const;

export type CounterColumn = (typeof COUNTER_COLUMNS)[number];
export type CounterRow = Record<CounterColumn, number>;

const SUMS = COUNTER_COLUMNS.map((c) => `coalesce(sum(${c}), 0)::bigint AS ${c}`).join(', ');

// A campaign's counters: its 4 shard rows (primary key campaign_stats).
export async function selectCampaignCounters(db: Queryable, campaignId: string): Promise<CounterRow> {
  const { rows } = await db.query<CounterRow>(`SELECT ${SUMS} FROM campaign_stats WHERE campaign_id = $1`, [campaignId]);
  return rows[0];
}

export interface HourlyRow {
  hour: Date;
  delivered: number;
  opens: number;
  clicks: number;
  bounces: number;
}

// The report's timeline, oldest hour first (primary-key range of campaign_hourly).
export async function selectCampaignTimeline(db: Queryable, campaignId: string): Promise<HourlyRow[]> {
  const { rows } = await db.query<HourlyRow>(
    `SELECT hour, sum(delivered)::bigint AS delivered, sum(opens)::bigint AS opens, sum(clicks)::bigint AS clicks, sum(bounces)::bigint AS bounces
       FROM campaign_hourly WHERE campaign_id = $1 GROUP BY hour ORDER BY hour`,
    [campaignId],
  );
  return rows;
}

// The campaign's most clicked links (a campaign has few distinct links: a scan of its range).
export async function selectTopLinks(db: Queryable, campaignId: string, limit: number): Promise<{ url: string; clicks: number; unique_clicks: number }[]> {
  const { rows } = await db.query(
    `SELECT url, sum(clicks)::bigint AS clicks, sum(unique_clicks)::bigint AS unique_clicks
       FROM campaign_links WHERE campaign_id = $1 GROUP BY url ORDER BY clicks DESC, url LIMIT $2`,
    [campaignId, limit],
  );
  return rows;
}

export interface DailyRow extends CounterRow {
  day: string;
}

// Daily counters of one scope ('' = the whole account, 'c:<campaign>', 't:<tag>') between two
// UTC days inclusive, one row per day that had events (primary-key range of stats_daily).
export async function selectDailyCounters(db: Queryable, accountId: string, scope: string, fromDay: string, toDay: string): Promise<DailyRow[]> {
  const { rows } = await db.query<DailyRow>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, ${SUMS}
       FROM stats_daily
      WHERE account_id = $1 AND scope = $2 AND day BETWEEN $3::date AND $4::date
      GROUP BY day ORDER BY day`,
    [accountId, scope, fromDay, toDay],
  );
  return rows;
}

export interface HealthRow {
  account_id: string;
  status: 'ok' | 'warning' | 'at_risk';
  at_risk_since: Date | null;
  acknowledged_at: Date | null;
  evaluated_at: Date;
}

// The recorded health of an account (its at-risk episode), or null before the first record.
export async function selectHealthRow(db: Queryable, accountId: string): Promise<HealthRow | null> {
  const { rows } = await db.query<HealthRow>('SELECT * FROM account_health WHERE account_id = $1', [accountId]);
  return rows[0] ?? null;
}

// Sender-side bounces by reason over UTC days (primary-key range of stats_bounce_reasons,
// migration 018: a few rows per day at most).
export async function selectSenderSideBounces(db: Queryable, accountId: string, fromDay: string, toDay: string): Promise<{ reason: string; n: number }[]> {
  const { rows } = await db.query<{ reason: string; n: number }>(
    `SELECT reason, sum(n)::bigint AS n FROM stats_bounce_reasons
      WHERE account_id = $1 AND day BETWEEN $2::date AND $3::date
      GROUP BY reason ORDER BY reason`,
    [accountId, fromDay, toDay],
  );
  return rows;
}

// Records an evaluation whose level changed. An at-risk episode starts at the first at_risk evaluation and ends at
// the first that is not; the acknowledgement is kept and compared with the episode's start.
export async function upsertHealth(db: Queryable, accountId: string, status: HealthRow['status'], now: Date): Promise<HealthRow> {
  const { rows } = await db.query<HealthRow>(
    `INSERT INTO account_health AS h (account_id, status, at_risk_since, evaluated_at)
     VALUES ($1, $2, CASE WHEN $2 = 'at_risk' THEN $3::timestamptz END, $3)
     ON CONFLICT (account_id) DO UPDATE
        SET status = EXCLUDED.status, evaluated_at = EXCLUDED.evaluated_at,
            at_risk_since = CASE WHEN EXCLUDED.status = 'at_risk' THEN coalesce(h.at_risk_since, EXCLUDED.evaluated_at) END
     RETURNING *`,
    [accountId, status, now],
  );
  return rows[0];
}

export async function setHealthAcknowledged(db: Queryable, accountId: string, now: Date): Promise<void> {
  await db.query('UPDATE account_health SET acknowledged_at = $2 WHERE account_id = $1', [accountId, now]);
}

// Accounts with a campaign sending now: the ones whose health the worker watches.
export async function selectAccountsSendingCampaigns(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ account_id: string }>(`SELECT DISTINCT account_id FROM campaigns WHERE status = 'sending'`);
  return rows.map((r) => r.account_id);
}
