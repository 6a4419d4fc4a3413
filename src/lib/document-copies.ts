/**
 * What the build step's copy readers share: a template's per-recipient copies differ from an
 * earlier document in a few merged values, so a reader keeps the last few documents it read
 * whole (`RecentDocuments`) and, for a new document, finds the one it is a copy of and the span
 * that changed (`changedSpan`), to read only that span again. What each reader keeps of a
 * document and how it reads the span is its own: the derived text part's leaves
 * (src/mail/html-text/copies.ts), the tracking rewrite's link sites
 * (src/mail/link-sites/copies.ts). A document equal to one seen before is not a copy but the
 * same content: ./content-cache.ts finds it with one comparison (docs/decisions/0060-one-copy-search.md).
 */

/**
 * The common prefix and suffix of an earlier document and a copy of it: the copy's changed
 * span is [prefix, copy.length - suffix), the earlier document's [prefix, earlier.length - suffix).
 * The two never overlap: prefix + suffix ≤ the shorter length.
 */
export interface ChangedSpan {
  readonly prefix: number;
  readonly suffix: number;
}

/**
 * The last pair searched. The tracking rewrite and the derived text part both compare the
 * same message content with the same earlier copy (the template's first copy, read whole by
 * both): the second asks for the span the first found. `===` is equality of content, so a
 * hit is the right answer whatever string objects are asked about.
 */
let lastEarlier = '';
let lastCopy = '';
let lastSpan: ChangedSpan = { prefix: 0, suffix: 0 };

export function changedSpan(earlier: string, copy: string): ChangedSpan {
  if (copy === lastCopy && earlier === lastEarlier) return lastSpan;
  const prefix = commonPrefix(earlier, copy);
  const span = { prefix, suffix: commonSuffix(earlier, copy, Math.min(earlier.length, copy.length) - prefix) };
  lastEarlier = earlier;
  lastCopy = copy;
  lastSpan = span;
  return span;
}

/**
 * Comparisons of equal slices run natively (a character-by-character loop in JavaScript costs
 * ~5 ns a character, and `startsWith` visits them one by one): chunks double while they are
 * equal; a chunk that differs is halved until the first difference is within a few characters.
 */
const FIRST_CHUNK = 64;
const LINEAR_BELOW = 8;

/** The length of the longest common prefix of `a` and `b`. */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let at = 0;
  let chunk = FIRST_CHUNK;
  while (at < n) {
    const end = Math.min(n, at + chunk);
    if (a.slice(at, end) === b.slice(at, end)) {
      at = end;
      chunk *= 2;
    } else if (end - at > LINEAR_BELOW) {
      chunk = (end - at) >> 1;
    } else {
      while (at < end && a.charCodeAt(at) === b.charCodeAt(at)) at++;
      return at;
    }
  }
  return at;
}

/** The length of the longest common suffix of `a` and `b`, at most `max` (clamped to the shorter length). */
export function commonSuffix(a: string, b: string, max: number): number {
  const limit = Math.min(max, a.length, b.length);
  let length = 0;
  let chunk = FIRST_CHUNK;
  while (length < limit) {
    const next = Math.min(limit, length + chunk);
    if (a.slice(a.length - next, a.length - length) === b.slice(b.length - next, b.length - length)) {
      length = next;
      chunk *= 2;
    } else if (next - length > LINEAR_BELOW) {
      chunk = (next - length) >> 1;
    } else {
      while (length < next && a.charCodeAt(a.length - 1 - length) === b.charCodeAt(b.length - 1 - length)) length++;
      return length;
    }
  }
  return length;
}

/**
 * The last `size` documents a reader read whole (its own record of each), newest first: a
 * worker's messages interleave a few templates. A new document is tried against each in turn,
 * so each record should tell a document that is no copy of it in a comparison or two.
 */
export class RecentDocuments<R> {
  private readonly records: R[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`size must be a whole number ≥ 1, not ${size}`);
  }

  get length(): number {
    return this.records.length;
  }

  /** The first answer (newest record first) that is not null, or null. */
  firstOf<T>(answer: (record: R) => T | null): T | null {
    for (const record of this.records) {
      const found = answer(record);
      if (found !== null) return found;
    }
    return null;
  }

  /** Adds the newest record, dropping the oldest past `size`. */
  add(record: R): void {
    this.records.unshift(record);
    if (this.records.length > this.size) this.records.pop();
  }
}
