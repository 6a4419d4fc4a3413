import type { Pool } from '../../db/pool.js';
import type { Page } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import { selectRecipientPage, type CampaignRow, type RecipientRow } from '../../db/queries/campaigns/campaigns.js';
import { selectCampaignCounters, selectCampaignTimeline, selectTopLinks, type CounterRow, type HourlyRow } from '../../db/queries/stats.js';
import { hasPrefix } from '../../ids.js';
import { requireCampaign } from './lifecycle.js';
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

/**
 * GET /api/v1/campaigns/{id}: the definition and everything measured, all from rollups. The
 * rollup reads are keyed by the campaign id alone, so they run together with the read of the
 * account's campaign row — one round trip instead of two — and their rows are dropped when
 * that read finds no such campaign of this account (404).
 */
export async function loadCampaignReport(db: Pool, accountId: string, id: string, now: Date): Promise<CampaignReport> {
  if (!hasPrefix(id, 'cmp')) await requireCampaign(db, accountId, id); // not an id at all: 404 without reading rollups
  const [c, counters, links, hours] = await Promise.all([
    requireCampaign(db, accountId, id),
    selectCampaignCounters(db, id),
    selectTopLinks(db, id, TOP_LINKS),
    selectCampaignTimeline(db, id),
  ]);
  return reportOf(c, counters, links, hours, now);
}

function reportOf(
  c: CampaignRow,
  counters: CounterRow,
  links: Awaited<ReturnType<typeof selectTopLinks>>,
  hours: HourlyRow[],
  now: Date,
): CampaignReport {
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

/** A page of the campaign's recipients (its messages, in subscriber id order), of one delivery status or all. */
export async function listRecipients(db: Queryable, accountId: string, campaignId: string, status: string | null, page: Page): Promise<RecipientRow[]> {
  return selectRecipientPage(db, accountId, campaignId, status, page);
}
