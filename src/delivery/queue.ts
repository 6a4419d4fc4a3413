import type { Queryable } from '../db/pool.js';
import { SETTLE_STOPPED } from '../db/queries/campaigns/campaigns.js';
import { columnsWithContent, MESSAGE_COLUMNS, MESSAGE_CONTENT, type MessageRow } from '../db/queries/messages.js';

/** Per-destination caps on a claim (claimDueMessages), as parallel arrays. */
export interface DestinationRooms {
  domains: string[];
  destinations: string[];
  rooms: number[];
}

/** A column a MessageRow may lack: a claim may leave it out and still return MessageRows. */
type OptionalColumn = { [K in keyof MessageRow]-?: undefined extends MessageRow[K] ? K : never }[keyof MessageRow];

/** Columns delivery never reads (when it was opened or clicked, its idempotency reference, the source of its last attempt). */
export const CLAIM_LEAVES_OUT = ['opened_at', 'clicked_at', 'idempotency_ref', 'source_name', 'source_address'] as const satisfies readonly OptionalColumn[];

/**
 * The columns a claim returns besides the content: every column of `messages` the delivery
 * path (route, build, plan) may read, each once. `m.*` beside the group's content sent a claimed
 * row's html, text and attachments twice, so PostgreSQL read (and decompressed) them twice and
 * the worker decoded and parsed both copies; and columns delivery never reads were parsed per
 * row all the same.
 */
export const CLAIMED_COLUMNS = MESSAGE_COLUMNS.filter((c) => !(CLAIM_LEAVES_OUT as readonly string[]).includes(c));

/** The content, returned once: the row's own, or on a cc/bcc copy its group's. */
export const CLAIMED_CONTENT = MESSAGE_CONTENT;

/**
 * What a claim took, and how many due messages it found (at most its limit). Finding fewer than
 * the limit is what says the due queue was seen to its end: taking fewer says less, since rows
 * another worker was claiming at the same moment are skipped (SKIP LOCKED) with more due
 * behind them, and so does taking none.
 */
export interface Claim {
  rows: MessageRow[];
  dueSeen: number;
}

type ClaimedRow = MessageRow & { due_seen: number };

// cc/bcc copies carry no content of their own: read it from the group's row (the join sees that
// row as of the statement's snapshot; content never changes after accept).
const CLAIMED_ROW = columnsWithContent(CLAIMED_COLUMNS);

/**
 * Claims up to `limit` due messages for this worker. FOR UPDATE SKIP LOCKED lets many workers
 * claim concurrently without blocking each other or taking the same row. A claimed message
 * becomes 'sending' with next_attempt_at = lease expiry: if the worker dies, the row is due
 * again when the lease ends and another worker claims it (never deleted). Oldest due first.
 *
 * A campaign paused or cancelled while its message was in flight leaves that row 'sending'
 * (pause holds and cancel removes only unsent rows). If its worker died, the expired lease is
 * not claimed: the pause holds the row, the cancel removes it and counts it as cancelled, as
 * if it had been unsent then. Locking the campaign row waits for a resume or cancel under way
 * and re-checks its status (as settleStrayDeferrals does); an update lock rather than a share
 * lock, so two claimers counting cancelled rows of one campaign queue instead of deadlocking.
 * The settling itself is SETTLE_STOPPED, shared with settleStrayDeferrals.
 *
 * Two streams: `stream: 'transactional'` claims only messages of no campaign (through
 * messages_due_without_campaign), `'campaign'` only campaign mail; the engine claims the first
 * before the second, so transactional mail never waits behind a campaign.
 * `skipDomains` are recipient domains whose destination is suspended or full (traffic
 * shaping): their mail stays queued for the workers with room for it. `rooms` caps what is
 * taken of a destination with some room left: `domains[i]` belongs to destination
 * `destinations[i]`, which takes at most `rooms[i]` messages (every entry of a destination
 * carries its room). Without it, a claim of 100 for a destination with room for 20 handed 80
 * straight back, and claimed them again at the next refill: 4,300 of a worker's 7,300 claimed
 * rows in bench:delivery were released untried (docs/architecture.md#delivery). The oldest
 * `limit` due rows are read, those within their destination's room chosen, and only those
 * locked (SKIP LOCKED: a row another worker is claiming right now is left to it).
 */
export async function claimDue(
  db: Queryable,
  workerId: string,
  now: Date,
  limit: number,
  leaseMs: number,
  opts: { stream?: 'transactional' | 'campaign' | 'all'; skipDomains?: string[]; rooms?: DestinationRooms } = {},
): Promise<Claim> {
  const stream = opts.stream ?? 'all';
  const rooms = opts.rooms ?? { domains: [], destinations: [], rooms: [] };
  const params: unknown[] = [workerId, now, limit, leaseMs, rooms.domains, rooms.destinations, rooms.rooms];
  let filter = stream === 'transactional' ? ' AND campaign_id IS NULL' : stream === 'campaign' ? ' AND campaign_id IS NOT NULL' : '';
  const skipping = opts.skipDomains !== undefined && opts.skipDomains.length > 0;
  if (skipping) {
    params.push(opts.skipDomains);
    filter += ' AND NOT (to_domain = ANY($8::text[]))';
  }
  // A named (prepared) statement per variant: a worker claims hundreds of times a minute, and
  // planning this statement took longer than running it (~0.9 ms against ~1.2 ms for 20 rows,
  // EXPLAIN ANALYZE). Prepared, each connection plans it a few times and then reuses its plan
  // (docs/decisions/0046-worker-statements-planned-once.md) — provided the generic plan looks no
  // dearer than the custom ones: `due` finds the chosen rows by primary key (`id = ANY`), which
  // the generic plan does too, where a join to `chosen` made it hash every due row of
  // messages_due, so PostgreSQL planned each call anew (docs/decisions/0057-delivery-statements-in-postgres.md).
  const { rows } = await db.query<ClaimedRow>({
    name: `postline-claim-${stream}${skipping ? '-skip' : ''}`,
    values: params,
    text: `WITH candidates AS (
       SELECT id, to_domain, next_attempt_at FROM messages
        WHERE status IN ('queued', 'scheduled', 'deferred', 'sending') AND next_attempt_at <= $2${filter}
        ORDER BY next_attempt_at
        LIMIT $3
     ),
     chosen AS (
       SELECT id FROM (
         SELECT c.id, r.room,
                row_number() OVER (PARTITION BY coalesce(r.destination, c.to_domain) ORDER BY c.next_attempt_at, c.id) AS nth
           FROM candidates c LEFT JOIN unnest($5::text[], $6::text[], $7::int[]) AS r(domain, destination, room) ON r.domain = c.to_domain
       ) ranked
        WHERE room IS NULL OR nth <= room
     ),
     -- Locked only once chosen (a row lock is a write), re-checked under the lock: a row another
     -- claimer took meanwhile is skipped, or no longer due once its claim committed. By primary
     -- key, so that the generic plan is as good as a custom one (see above).
     due AS (
       SELECT m.id, m.status, m.campaign_id FROM messages m
        WHERE m.id = ANY (ARRAY(SELECT id FROM chosen))
          AND m.status IN ('queued', 'scheduled', 'deferred', 'sending') AND m.next_attempt_at <= $2
          FOR UPDATE OF m SKIP LOCKED
     ),
     stopped AS (
       SELECT d.id, c.status AS campaign_status
         FROM due d JOIN campaigns c ON c.id = d.campaign_id
        WHERE d.status = 'sending' AND c.status IN ('paused', 'cancelled')
          FOR NO KEY UPDATE OF c
     ),
     ${SETTLE_STOPPED},
     claimed AS (
       UPDATE messages m
          SET status = 'sending',
              locked_by = $1,
              next_attempt_at = $2::timestamptz + make_interval(secs => $4::double precision / 1000),
              attempts = m.attempts + 1,
              first_attempt_at = coalesce(m.first_attempt_at, $2)
         FROM due WHERE m.id = due.id AND NOT EXISTS (SELECT 1 FROM stopped s WHERE s.id = due.id)
       RETURNING m.*
     )
     -- One row even when nothing was claimed (all columns null but due_seen): how many due
     -- messages the claim found is known either way (see Claim).
     SELECT c.*, s.due_seen
       FROM (SELECT count(*)::int AS due_seen FROM candidates) s
       LEFT JOIN (SELECT ${CLAIMED_ROW} FROM claimed m LEFT JOIN messages g ON g.id = m.group_id AND m.group_id <> m.id) c ON true`,
  });
  const dueSeen = rows[0].due_seen;
  return { rows: rows.length === 1 && rows[0].id === null ? [] : rows, dueSeen };
}

/** claimDue's rows alone. */
export async function claimDueMessages(...args: Parameters<typeof claimDue>): Promise<MessageRow[]> {
  return (await claimDue(...args)).rows;
}

export interface MessageOutcome {
  id: string;
  status: 'delivered' | 'deferred' | 'bounced' | 'failed';
  nextAttemptAt: Date;
  response: string;
  mx: string | null;
  deliveredAt: Date | null;
}

/**
 * The event types an attempt's outcome records (delivery/outcome.ts). The record statement
 * writes their counters itself; another type recorded through it would go uncounted.
 */
export type DeliveryEventType = 'delivered' | 'deferred' | 'hard_bounce' | 'soft_bounce';

/** One attempt's outcome as recorded: the message's new state, the source it left from, its event. */
export interface OutcomeRecord {
  outcome: MessageOutcome;
  source: { name: string; address: string } | null;
  event: { id: string; accountId: string; type: DeliveryEventType; email: string; data: Record<string, unknown>; occurredAt: Date };
}

/**
 * The counters of the recorded events (`recorded`, joined to the updated messages `done` for
 * their tags), exactly as the events_rollup trigger (migrations 013, 019) counts these four
 * types: the campaign's counters, the campaign's hourly buckets (delivered and bounces; not
 * deferrals), and the account's day in its scopes ('' for everything, 'c:<campaign>' and one
 * 't:<tag>' per tag named, twice for a tag named twice), in the trigger's lock order
 * (campaign_stats, campaign_hourly, stats_daily) and shard (pg_backend_pid() % 4). `rolled`
 * is read only once the three upserts have run.
 */
const OUTCOME_COUNTERS = `counted AS (
       SELECT r.account_id, r.campaign_id, r.type, r.occurred_at, d.tags,
              (r.type = 'delivered')::int AS delivered, (r.type = 'deferred')::int AS deferred,
              (r.type = 'hard_bounce')::int AS hard_bounced, (r.type = 'soft_bounce')::int AS soft_bounced
         FROM recorded r JOIN done d ON d.id = r.message_id
     ),
     campaign_counts AS (
       INSERT INTO campaign_stats AS t (campaign_id, shard, delivered, deferred, hard_bounced, soft_bounced)
       SELECT campaign_id, pg_backend_pid() % 4, sum(delivered), sum(deferred), sum(hard_bounced), sum(soft_bounced)
         FROM counted WHERE campaign_id IS NOT NULL GROUP BY campaign_id ORDER BY campaign_id
       ON CONFLICT (campaign_id, shard) DO UPDATE SET
         delivered = t.delivered + EXCLUDED.delivered, deferred = t.deferred + EXCLUDED.deferred,
         hard_bounced = t.hard_bounced + EXCLUDED.hard_bounced, soft_bounced = t.soft_bounced + EXCLUDED.soft_bounced
       RETURNING 1
     ),
     hourly AS (
       INSERT INTO campaign_hourly AS t (campaign_id, hour, shard, delivered, bounces)
       SELECT campaign_id, date_trunc('hour', occurred_at), pg_backend_pid() % 4, sum(delivered), sum(hard_bounced + soft_bounced)
         FROM counted WHERE campaign_id IS NOT NULL AND type IN ('delivered', 'hard_bounce', 'soft_bounce')
        GROUP BY 1, 2 ORDER BY 1, 2
       ON CONFLICT (campaign_id, hour, shard) DO UPDATE SET delivered = t.delivered + EXCLUDED.delivered, bounces = t.bounces + EXCLUDED.bounces
       RETURNING 1
     ),
     daily AS (
       INSERT INTO stats_daily AS t (account_id, scope, day, shard, delivered, deferred, hard_bounced, soft_bounced)
       SELECT c.account_id, sc.scope, (c.occurred_at AT TIME ZONE 'UTC')::date, pg_backend_pid() % 4,
              sum(c.delivered), sum(c.deferred), sum(c.hard_bounced), sum(c.soft_bounced)
         FROM counted c,
              LATERAL unnest(ARRAY['']
                             || CASE WHEN c.campaign_id IS NULL THEN '{}'::text[] ELSE ARRAY['c:' || c.campaign_id] END
                             || ARRAY(SELECT 't:' || tag FROM unnest(c.tags) AS tag)) AS sc(scope)
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
       ON CONFLICT (account_id, scope, day, shard) DO UPDATE SET
         delivered = t.delivered + EXCLUDED.delivered, deferred = t.deferred + EXCLUDED.deferred,
         hard_bounced = t.hard_bounced + EXCLUDED.hard_bounced, soft_bounced = t.soft_bounced + EXCLUDED.soft_bounced
       RETURNING 1
     ),
     rolled AS (
       SELECT (SELECT count(*) FROM campaign_counts) + (SELECT count(*) FROM hourly) + (SELECT count(*) FROM daily) AS n
     )`;

/**
 * Records what a group of finished deliveries came to, in ONE statement (data-modifying CTEs):
 * the claims handed back untried are released (the claim's attempt undone, due at
 * `nextAttemptAt`); every attempted message gets its new state, its source and its event, and
 * the events' counters are added to the rollups; and the event writers' wake-up (NOTIFY
 * postline_events) is sent with the commit. Before, a group
 * was BEGIN, the release UPDATE, the UPDATE, the INSERT, COMMIT and a pg_notify after it: six
 * round trips where one does, each a socket write on both sides of a loopback that is costly
 * on this kind of machine (docs/architecture.md#delivery).
 *
 * The `locked_by` guard means a worker whose lease expired (and whose message another worker
 * has since claimed) can neither release nor overwrite the newer attempt's state; only the
 * messages actually updated get their event (the INSERT joins the UPDATE's RETURNING), and
 * their ids are returned for the steps that follow in the caller's transaction. Events keep
 * the order of `outcomes` (WITH ORDINALITY), as webhooks deliver them in seq order.
 *
 * The counters (OUTCOME_COUNTERS) are written here rather than by the generic events_rollup
 * trigger, as the accept and the campaign fan-out write theirs (docs/decisions/0057-delivery-
 * statements-in-postgres.md): the trigger joined every event back to its message, ranked and
 * grouped them for click and open counters delivery never has; and the events carry their
 * message's campaign from here, so the events_campaign trigger (migration 040) does not look
 * it up per event. The insert tells the
 * trigger to skip this statement's events (`postline.events_rollup = by_caller`, read when the
 * insert completes), and the statement sets it back to '' once its counters are written, so
 * events a caller's transaction inserts afterwards (record.ts's bounce steps, for instance) are
 * rolled up by the trigger as before.
 *
 * NOTIFY inside the statement rather than db/notify.ts's notifySoon after it: a notifying
 * commit takes PostgreSQL's one notify-queue lock, which is why request paths do not; here at
 * most one record write per worker is in flight (GroupCommit, maxInFlight 1), so the lock
 * orders a few commits a second, and the separate pg_notify round trip per group is saved.
 */
export async function recordOutcomes(
  db: Queryable,
  workerId: string,
  released: { id: string; nextAttemptAt: Date }[],
  outcomes: OutcomeRecord[],
): Promise<Set<string>> {
  if (released.length === 0 && outcomes.length === 0) return new Set();
  const o = outcomes.map((r) => r.outcome);
  const e = outcomes.map((r) => r.event);
  // Prepared, like the claim: planned a few times per connection, then its plan is reused.
  const { rows } = await db.query<{ done: string[] }>({
    name: 'postline-record-outcomes',
    text: `WITH released AS (
       UPDATE messages m
          SET status = CASE WHEN m.attempts <= 1 THEN 'queued' ELSE 'deferred' END,
              first_attempt_at = CASE WHEN m.attempts <= 1 THEN NULL ELSE m.first_attempt_at END,
              attempts = m.attempts - 1, next_attempt_at = r.next_attempt_at, locked_by = NULL
         FROM unnest($2::text[], $3::timestamptz[]) AS r(id, next_attempt_at)
        WHERE m.id = r.id AND m.locked_by = $1 AND m.status = 'sending'
       RETURNING m.id
     ),
     done AS (
       UPDATE messages m
          SET status = o.status, next_attempt_at = o.next_attempt_at, last_response = o.response,
              last_mx = o.mx, delivered_at = o.delivered_at, locked_by = NULL,
              source_name = coalesce(o.source_name, m.source_name), source_address = coalesce(o.source_address, m.source_address)
         FROM unnest($4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[], $9::timestamptz[], $10::text[], $11::text[])
              AS o(id, status, next_attempt_at, response, mx, delivered_at, source_name, source_address)
        WHERE m.id = o.id AND m.locked_by = $1 AND m.status = 'sending'
       RETURNING m.id, m.campaign_id, m.tags
     ),
     recorded AS (
       INSERT INTO events (id, account_id, message_id, campaign_id, type, email, url, data, occurred_at)
       SELECT e.id, e.account_id, e.message_id, done.campaign_id, e.type, e.email, NULL, e.data, e.occurred_at
         FROM unnest($4::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::jsonb[], $17::timestamptz[])
              WITH ORDINALITY AS e(message_id, id, account_id, type, email, data, occurred_at, n)
         JOIN done ON done.id = e.message_id
        WHERE (SELECT set_config('postline.events_rollup', 'by_caller', true)) IS NOT NULL
        ORDER BY e.n
       RETURNING account_id, message_id, campaign_id, type, occurred_at
     ),
     ${OUTCOME_COUNTERS}
     SELECT array(SELECT id FROM done) AS done,
            (SELECT count(*) FROM released) AS released,
            (SELECT pg_notify('postline_events', '') FROM recorded LIMIT 1) AS notified,
            -- Its filter reads the counters first: by then the insert has completed.
            (SELECT set_config('postline.events_rollup', '', true) FROM rolled WHERE rolled.n >= 0) AS rollup_reset`,
    values: [
      workerId,
      released.map((r) => r.id),
      released.map((r) => r.nextAttemptAt),
      o.map((x) => x.id),
      o.map((x) => x.status),
      o.map((x) => x.nextAttemptAt),
      o.map((x) => x.response),
      o.map((x) => x.mx),
      o.map((x) => x.deliveredAt),
      outcomes.map((r) => r.source?.name ?? null),
      outcomes.map((r) => r.source?.address ?? null),
      e.map((x) => x.id),
      e.map((x) => x.accountId),
      e.map((x) => x.type),
      e.map((x) => x.email),
      e.map((x) => JSON.stringify(x.data)),
      e.map((x) => x.occurredAt),
    ],
  });
  return new Set(rows[0].done);
}

// Who holds leases on this host: the few distinct holders of rows in 'sending' (the partial
// index messages_due covers the status filter). starts_with, not LIKE: host names may hold '_'.
export async function leaseHoldersOn(db: Queryable, hostPrefix: string): Promise<string[]> {
  const { rows } = await db.query<{ locked_by: string }>(
    `SELECT DISTINCT locked_by FROM messages
      WHERE status = 'sending' AND locked_by IS NOT NULL AND starts_with(locked_by, $1)`,
    [hostPrefix],
  );
  return rows.map((r) => r.locked_by);
}

/**
 * Makes the leases of dead holders due now, so the next claim (by anyone) takes them. The
 * `locked_by` stays until then: a holder that somehow still ran could not record over the
 * newer attempt, since the claim replaces it.
 */
export async function releaseLeasesOf(db: Queryable, holders: string[], now: Date): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE messages SET next_attempt_at = $2
      WHERE status = 'sending' AND locked_by = ANY($1::text[]) AND next_attempt_at > $2`,
    [holders, now],
  );
  return rowCount ?? 0;
}
