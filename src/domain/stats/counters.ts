import { COUNTER_COLUMNS, type CounterColumn, type CounterRow } from '../../db/queries/stats.js';

type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
const camel = <S extends string>(s: S) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) as Camel<S>;

/** Counts as the API shows them (campaign reports and GET /api/v1/stats): the counter columns in camelCase. */
export type CountName = Camel<CounterColumn>;
export type Counts = Record<CountName, number>;
export const COUNT_NAMES = COUNTER_COLUMNS.map(camel) as CountName[];

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
  return Object.fromEntries(COUNTER_COLUMNS.map((c) => [camel(c), r[c]])) as Counts;
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

export const ZERO_COUNTS = Object.fromEntries(COUNTER_COLUMNS.map((c) => [c, 0])) as CounterRow;

export function addCounters(a: CounterRow, b: CounterRow): CounterRow {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof CounterRow)[]) out[k] = a[k] + b[k];
  return out;
}
