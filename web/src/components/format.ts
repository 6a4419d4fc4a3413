/** Numbers in sentences: "1 subscriber", "2 subscribers"; rates as "12.5 %" that never break before the sign. */

/** The noun for a count, English plurals: `plural(1, 'subscriber')` → "subscriber"; irregular ones pass `many`. */
export function noun(n: number, one: string, many = `${one}s`): string {
  return n === 1 ? one : many;
}

/** "1 subscriber", "1,204 subscribers". */
export function plural(n: number, one: string, many?: string): string {
  return `${n.toLocaleString('en')} ${noun(n, one, many)}`;
}

/** A rate in [0, 1] as a percentage with one decimal and a no-break space before the sign. */
export function pct(r: number): string {
  return `${(r * 100).toFixed(1)}\u00a0%`;
}
