import type { CounterRow } from '../../db/queries/stats.js';

/** Counts as the API shows them (campaign reports and GET /api/v1/stats). */
export interface Counts {
  sent: number;
  delivered: number;
  deferred: number;
  hardBounced: number;
  softBounced: number;
  complaints: number;
  unsubscribes: number;
  opens: number;
  uniqueOpens: number;
  machineOpens: number;
  clicks: number;
  uniqueClicks: number;
}

/**
 * Rates, each a fraction 0–1 rounded to 4 places (docs/stats.md says what each is over):
 * delivery = delivered / sent; open = uniqueOpens / delivered; click = uniqueClicks / delivered;
 * clickToOpen = uniqueClicks / uniqueOpens; bounce = (hard + soft) / sent;
 * complaint = complaints / delivered; unsubscribe = unsubscribes / delivered. 0 over 0 is 0.
 */
export interface Rates {
  delivery: number;
  open: number;
  click: number;
  clickToOpen: number;
  bounce: number;
  complaint: number;
  unsubscribe: number;
}

export function toCounts(r: CounterRow): Counts {
  return {
    sent: r.sent,
    delivered: r.delivered,
    deferred: r.deferred,
    hardBounced: r.hard_bounced,
    softBounced: r.soft_bounced,
    complaints: r.complaints,
    unsubscribes: r.unsubscribes,
    opens: r.opens,
    uniqueOpens: r.unique_opens,
    machineOpens: r.machine_opens,
    clicks: r.clicks,
    uniqueClicks: r.unique_clicks,
  };
}

export function ratio(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : 0;
}

export function ratesOf(c: Counts): Rates {
  return {
    delivery: ratio(c.delivered, c.sent),
    open: ratio(c.uniqueOpens, c.delivered),
    click: ratio(c.uniqueClicks, c.delivered),
    clickToOpen: ratio(c.uniqueClicks, c.uniqueOpens),
    bounce: ratio(c.hardBounced + c.softBounced, c.sent),
    complaint: ratio(c.complaints, c.delivered),
    unsubscribe: ratio(c.unsubscribes, c.delivered),
  };
}

export const ZERO_COUNTS: CounterRow = {
  sent: 0, delivered: 0, deferred: 0, hard_bounced: 0, soft_bounced: 0, complaints: 0, unsubscribes: 0, opens: 0, unique_opens: 0,
  machine_opens: 0, clicks: 0, unique_clicks: 0,
};

export function addCounters(a: CounterRow, b: CounterRow): CounterRow {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof CounterRow)[]) out[k] = a[k] + b[k];
  return out;
}
