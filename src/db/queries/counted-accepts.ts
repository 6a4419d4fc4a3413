import type { Queryable } from '../pool.js';
import { rateWindowParams, rateWindowsUpsert, type RateWindowCount, type RateWindowTotal } from './api-keys.js';
import { ACCEPT_PARAM_COUNT, ACCEPT_RESULT, acceptCtes, acceptParams, type MessageRow, type SentEventRow } from './messages.js';

/**
 * The accept statement (insertSendsUnlessSuppressed) with the rate-limit counts of the
 * requests that arrived meanwhile in front of it: one round trip where there were two. An API
 * process's requests are counted and its sends stored by one group commit
 * (domain/request-writes.ts); while a statement is in flight, the counts of new requests and
 * the sends of earlier ones queue together, and this statement writes both
 * (docs/decisions/0052-counts-ride-with-accepts.md).
 *
 * Each part does what it does alone: the counts add exactly one per request to the shared
 * window rows and return the totals after their addition; the sends are stored, suppressed
 * or refused exactly as by insertSendsUnlessSuppressed. The rows' source is read only after
 * the count (`after` of acceptCtes: an init plan over `rc`), so every process locks the window
 * rows before the stats_daily rows, in one order, and two processes cannot deadlock on them.
 * One statement, one transaction: a failed send fails the counts with it, which its group
 * commit then writes again without it (db/group-commit.ts), so no count is lost or doubled.
 */
const COUNTED_ACCEPTS = `WITH rc AS (${rateWindowsUpsert(ACCEPT_PARAM_COUNT + 1)}),
     ${acceptCtes('\n        WHERE (SELECT count(*) FROM rc) > 0')}
     SELECT ${ACCEPT_RESULT},
            c.buckets, c.window_starts, c.counts
       FROM (SELECT array_agg(bucket) AS buckets, array_agg(window_start) AS window_starts, array_agg(count) AS counts FROM rc) c`;

export async function countAndInsertSends(
  db: Queryable,
  counts: readonly RateWindowCount[],
  rows: MessageRow[],
  keys: (string | null)[],
  events: SentEventRow[],
): Promise<{ totals: RateWindowTotal[]; suppressed: Set<string> }> {
  const { rows: out } = await db.query<{ suppressed: string[]; buckets: string[]; window_starts: Date[]; counts: number[] }>({
    // Named, as its two parts are alone: parsed and planned once per connection.
    name: 'count_and_insert_sends',
    text: COUNTED_ACCEPTS,
    values: [...acceptParams(rows, keys, events), ...rateWindowParams(counts)],
  });
  const r = out[0];
  return {
    totals: r.buckets.map((bucket, i) => ({ bucket, window_start: r.window_starts[i], count: r.counts[i] })),
    suppressed: new Set(r.suppressed),
  };
}
