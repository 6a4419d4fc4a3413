import { GroupCommit } from '../db/group-commit.js';
import type { Queryable } from '../db/pool.js';
import { addToRateWindows, type RateWindowCount, type RateWindowTotal } from '../db/queries/api-keys.js';
import { countAndInsertSends } from '../db/queries/counted-accepts.js';
import { insertSendsUnlessSuppressed, type MessageRow, type SentEventRow } from '../db/queries/messages.js';

type Count = { kind: 'count'; bucket: string; windowStart: Date };
type Accept = { kind: 'accept'; rows: MessageRow[]; keys: (string | null)[]; events: SentEventRow[] };

/**
 * What an API process's requests write on their way: each request's rate-limit count and each
 * accepted send's rows, in ONE group commit (docs/decisions/0052-counts-ride-with-accepts.md).
 * What queues while a statement is in flight is written by the next one: counts alone by the
 * rate-window upsert, sends alone by the accept statement, both by the accept statement with
 * the counts in front (db/queries/counted-accepts.ts) — one round trip where there were two,
 * and batches twice as deep, because a request's count and an earlier request's send no
 * longer wait for separate statements.
 *
 * The count stays exact across processes: it is kept in the shared window row and each
 * request adds exactly one, so a statement that adds n to a window and learns the total T
 * after its addition has counted its requests as the (T - n + 1)th … Tth of the window, in the
 * order they were submitted. (Reserving blocks of counts per process would save statements
 * too, but refuses requests early while another process holds unused counts near the limit.)
 * Counts alone commit on the relaxed pool (no WAL flush wait: a count lost in a crash only
 * errs in the client's favour); with sends they commit as the sends must, durably. Nothing is
 * answered before its statement committed.
 */
export class RequestWrites {
  private readonly writes: GroupCommit<Count | Accept, number | Set<string>>;

  constructor(db: { pool: Queryable; relaxedPool?: Queryable }) {
    this.writes = new GroupCommit<Count | Accept, number | Set<string>>(async (items) => {
      const counts = items.filter((i): i is Count => i.kind === 'count');
      const accepts = items.filter((i): i is Accept => i.kind === 'accept');
      const windows = countsByWindow(counts);
      let totals: RateWindowTotal[] = [];
      let suppressed = new Set<string>();
      if (accepts.length === 0) {
        totals = await addToRateWindows(db.relaxedPool ?? db.pool, [...windows.values()]);
      } else {
        const rows = accepts.flatMap((a) => a.rows);
        const keys = accepts.flatMap((a) => a.keys);
        const events = accepts.flatMap((a) => a.events);
        if (counts.length === 0) suppressed = await insertSendsUnlessSuppressed(db.pool, rows, keys, events);
        else ({ totals, suppressed } = await countAndInsertSends(db.pool, [...windows.values()], rows, keys, events));
      }
      const ranks = ranksOf(counts, windows, totals);
      let c = 0;
      return items.map((item) => (item.kind === 'count' ? ranks[c++] : new Set(item.rows.filter((r) => suppressed.has(r.id)).map((r) => r.id))));
    });
  }

  /** Counts one request in `bucket`'s window starting at `windowStart`; resolves to its rank in the window (1 = first). */
  count(bucket: string, windowStart: Date): Promise<number> {
    return this.writes.submit({ kind: 'count', bucket, windowStart }) as Promise<number>;
  }

  /**
   * Stores one accepted send (its rows, their suppression keys, their `sent` events) unless
   * every recipient is suppressed (insertSendsUnlessSuppressed); resolves to the ids of its
   * suppressed rows.
   */
  storeSend(rows: MessageRow[], keys: (string | null)[], events: SentEventRow[]): Promise<Set<string>> {
    return this.writes.submit({ kind: 'accept', rows, keys, events }) as Promise<Set<string>>;
  }
}

const windowKey = (bucket: string, windowStart: Date) => `${bucket} ${windowStart.getTime()}`;

/** The requests to add per (bucket, window). */
function countsByWindow(counts: readonly Count[]): Map<string, RateWindowCount> {
  const windows = new Map<string, RateWindowCount>();
  for (const c of counts) {
    const key = windowKey(c.bucket, c.windowStart);
    const w = windows.get(key);
    if (w) w.n++;
    else windows.set(key, { bucket: c.bucket, windowStart: c.windowStart, n: 1 });
  }
  return windows;
}

/** Each count's rank in its window: the window's total before this statement, plus its place among the statement's own. */
function ranksOf(counts: readonly Count[], windows: Map<string, RateWindowCount>, totals: readonly RateWindowTotal[]): number[] {
  const before = new Map<string, number>();
  for (const t of totals) {
    const key = windowKey(t.bucket, t.window_start);
    before.set(key, t.count - windows.get(key)!.n);
  }
  return counts.map((c) => {
    const key = windowKey(c.bucket, c.windowStart);
    const rank = before.get(key)! + 1;
    before.set(key, rank);
    return rank;
  });
}
