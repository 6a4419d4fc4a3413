import { GroupCommit } from '../../db/group-commit.js';
import type { Queryable } from '../../db/pool.js';
import { addToRateWindows } from '../../db/queries/api-keys.js';

/**
 * The per-request rate-limit count, group-committed: the requests of one process
 * that arrive while a count is in flight are counted together by the next statement, one row
 * update per (bucket, window) for the whole batch instead of one per request. The count stays
 * exact across processes because it is still kept in the shared window row and each request
 * adds exactly one: a batch of n adds n and learns the total T after its addition, so its
 * requests are the (T - n + 1)th … Tth of the window, in the order they were submitted.
 * (Reserving blocks of counts per process was the alternative; it refuses requests early
 * when another process holds unused reservations near the limit, so the 601st would not be
 * exact.) Alone, a count is written at once; the relaxed pool (no WAL flush wait) is used,
 * as before, because a lost count after a crash only errs in the client's favour.
 */
export class RateCounter {
  private readonly counts: GroupCommit<{ bucket: string; windowStart: Date }, number>;

  constructor(db: Queryable) {
    this.counts = new GroupCommit(async (items) => {
      const groups = new Map<string, { bucket: string; windowStart: Date; n: number }>();
      const keyOf = (i: { bucket: string; windowStart: Date }) => `${i.bucket} ${i.windowStart.getTime()}`;
      for (const item of items) {
        const g = groups.get(keyOf(item));
        if (g) g.n++;
        else groups.set(keyOf(item), { ...item, n: 1 });
      }
      const totals = new Map<string, number>();
      for (const row of await addToRateWindows(db, [...groups.values()])) {
        const g = groups.get(keyOf({ bucket: row.bucket, windowStart: row.window_start }))!;
        totals.set(keyOf(g), row.count - g.n); // what the window held before this batch
      }
      return items.map((item) => {
        const k = keyOf(item);
        const n = totals.get(k)! + 1;
        totals.set(k, n);
        return n;
      });
    }, { maxBatch: 1000 });
  }

  /** Counts one request in `bucket`'s window starting at `windowStart`; resolves to its rank in the window (1 = first). */
  count(bucket: string, windowStart: Date): Promise<number> {
    return this.counts.submit({ bucket, windowStart });
  }
}
