import type { Queryable } from '../../db/pool.js';
import type { CampaignRow } from '../../db/queries/campaigns/campaigns.js';
import { selectCampaignCounters, selectCampaignTimeline, selectTopLinks } from '../../db/queries/stats.js';
import { ratesOf, toCounts, type Counts, type Rates } from '../stats/counters.js';
import { toDefinition, type CampaignDefinition } from './definition.js';

export const TOP_LINKS = 10;

export interface CampaignProgress {
  recipients: number;
  queued: number;
  remaining: number;
  percent: number;
  startedAt: string | null;
  finishedAt: string | null;
  etaSeconds: number | null;
}

export interface CampaignReport extends CampaignDefinition {
  progress: CampaignProgress;
  counts: Counts & { cancelled: number; skipped: { suppressed: number; unsubscribed: number; bounced: number; complained: number; duplicate: number } };
  rates: Rates;
  topLinks: { url: string; clicks: number; uniqueClicks: number }[];
  timeline: { hour: string; delivered: number; opens: number; clicks: number; bounces: number }[];
}

/** Progress from the campaign row and its counters (docs/campaigns.md#progress). */
export function progressOf(c: CampaignRow, counts: Counts, now: Date): CampaignProgress {
  const recipients = c.fanout_done ? c.queued : Math.max(c.audience_size ?? 0, c.queued);
  const finished = c.status === 'sent' || c.status === 'cancelled';
  const settled = counts.delivered + counts.hardBounced + counts.softBounced + c.cancelled;
  const remaining = finished ? 0 : Math.max(0, recipients - settled);
  const done = recipients - remaining;
  const percent = finished ? 100 : recipients > 0 ? Math.round((done / recipients) * 1000) / 10 : 0;
  let etaSeconds: number | null = null;
  if (c.status === 'sending' && c.started_at && done > 0 && remaining > 0) {
    const elapsed = (now.getTime() - c.started_at.getTime()) / 1000;
    etaSeconds = Math.ceil((elapsed / done) * remaining);
  }
  return {
    recipients,
    queued: c.queued,
    remaining,
    percent,
    startedAt: c.started_at?.toISOString() ?? null,
    finishedAt: c.finished_at?.toISOString() ?? null,
    etaSeconds,
  };
}

/** GET /api/v1/campaigns/{id}: the definition and everything measured, all from rollups. */
export async function campaignReport(db: Queryable, c: CampaignRow, now: Date): Promise<CampaignReport> {
  const [counters, links, hours] = await Promise.all([selectCampaignCounters(db, c.id), selectTopLinks(db, c.id, TOP_LINKS), selectCampaignTimeline(db, c.id)]);
  const counts = toCounts(counters);
  return {
    ...toDefinition(c),
    progress: progressOf(c, counts, now),
    counts: {
      ...counts,
      cancelled: c.cancelled,
      skipped: {
        suppressed: c.skipped_suppressed,
        unsubscribed: c.skipped_unsubscribed,
        bounced: c.skipped_bounced,
        complained: c.skipped_complained,
        duplicate: c.skipped_duplicate,
      },
    },
    rates: ratesOf(counts),
    topLinks: links.map((l) => ({ url: l.url, clicks: l.clicks, uniqueClicks: l.unique_clicks })),
    timeline: hours.map((h) => ({ hour: h.hour.toISOString(), delivered: h.delivered, opens: h.opens, clicks: h.clicks, bounces: h.bounces })),
  };
}
