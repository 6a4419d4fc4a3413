import type { PoolClient, Queryable } from '../../pool.js';
import type { CampaignRow } from './campaigns.js';
import { NO_QUOTA, quotaGate } from '../quota.js';

/**
 * The fan-out job's statements (domain/campaigns/fanout.ts runs them). A campaign's fan-out is
 * split into parts (ranges of subscriber ids, migration 021), each its own job: claimed under a
 * lease, advanced batch by batch, each batch's messages, the part's checkpoint and the
 * campaign's counters committed together.
 */

// Scheduled campaigns whose time has come start sending (the injectable clock's now).
export async function startDueCampaigns(db: Queryable, now: Date): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE campaigns SET status = 'sending', started_at = $1, updated_at = $1
      WHERE status = 'scheduled' AND scheduled_at <= $1
     RETURNING id`,
    [now],
  );
  return rows.map((r) => r.id);
}

export interface FanOutPart {
  campaign_id: string;
  account_id: string;
  part: number;
  last_subscriber_id: string;
  upto_id: string | null;
}

// One unfinished part of a sending campaign whose lease is free or expired, leased to this
// worker. SKIP LOCKED: a part another worker is claiming is passed over; oldest request first,
// then the parts in order (the workers of a campaign take its parts one after the other).
// Claim shape 3 of docs/architecture.md#background-jobs-one-claimlease-pattern.
export async function claimFanOutPart(db: Queryable, workerId: string, now: Date, leaseMs: number): Promise<FanOutPart | null> {
  const { rows } = await db.query<FanOutPart>(
    `WITH p AS (
       SELECT p.campaign_id, p.part, c.account_id
         FROM campaign_fanout_parts p JOIN campaigns c ON c.id = p.campaign_id
        WHERE c.status = 'sending' AND (p.locked_until IS NULL OR p.locked_until <= $2)
        ORDER BY c.send_requested_at, c.id, p.part
        LIMIT 1
        FOR UPDATE OF p SKIP LOCKED
     )
     UPDATE campaign_fanout_parts k SET locked_by = $1, locked_until = $2::timestamptz + make_interval(secs => $3::double precision / 1000)
       FROM p WHERE k.campaign_id = p.campaign_id AND k.part = p.part
     RETURNING k.campaign_id, p.account_id, k.part, k.last_subscriber_id, k.upto_id`,
    [workerId, now, leaseMs],
  );
  return rows[0] ?? null;
}

// A sending campaign whose fan-out has not been split into parts yet, locked (SKIP LOCKED: one
// worker splits it, the others pass over it). The caller re-checks in a later statement, which
// sees parts another worker committed after this statement's snapshot.
export async function lockUnsplitCampaign(db: Queryable): Promise<{ id: string; account_id: string } | null> {
  const { rows } = await db.query(
    `SELECT id, account_id FROM campaigns c
      WHERE status = 'sending' AND NOT fanout_done AND NOT EXISTS (SELECT 1 FROM campaign_fanout_parts p WHERE p.campaign_id = c.id)
      ORDER BY send_requested_at, id
      LIMIT 1
      FOR UPDATE SKIP LOCKED`,
  );
  return rows[0] ?? null;
}

export async function hasFanOutParts(db: Queryable, campaignId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT EXISTS (SELECT 1 FROM campaign_fanout_parts WHERE campaign_id = $1) AS e', [campaignId]);
  return rows[0].e;
}

// The parts: `bounds` are the last subscriber ids of every part but the last (ascending).
export async function insertFanOutParts(db: Queryable, campaignId: string, bounds: string[]): Promise<void> {
  await db.query(
    `INSERT INTO campaign_fanout_parts (campaign_id, part, last_subscriber_id, upto_id)
     SELECT $1, n - 1, coalesce(($2::text[])[n - 1], ''), ($2::text[])[n]
       FROM generate_series(1, cardinality($2::text[]) + 1) n`,
    [campaignId, bounds],
  );
}

// Sending campaigns whose fan-out is finished: candidates for 'sent' once nothing is pending.
export async function selectFannedOutCampaigns(db: Queryable): Promise<{ id: string; account_id: string }[]> {
  const { rows } = await db.query(`SELECT id, account_id FROM campaigns WHERE status = 'sending' AND fanout_done`);
  return rows;
}

export interface RecipientCandidate {
  id: string;
  email: string;
  email_key: string;
  name: string | null;
  attributes: Record<string, unknown>;
  status: 'active' | 'unsubscribed' | 'bounced' | 'complained';
  suppression: string | null;
  memberships: number;
}

export interface AudienceFilter {
  /** SQL over `subscribers s`, parameters appended to `params` ($1 = account id). */
  where: string;
  params: unknown[];
}

// The next batch of the audience after the checkpoint, in subscriber id order (the key that
// makes the checkpoint exact: a subscriber added later with a smaller id cannot exist, ids are
// time-ordered). Unconfirmed subscribers are not part of any audience. Each candidate comes with
// its suppression (one probe of the unique (account_id, email_key) index) and how many of the
// campaign's lists it is in (the duplicates one message per address removed).
export async function selectRecipientBatch(db: Queryable, f: AudienceFilter, lists: string[], after: string, upto: string | null, limit: number): Promise<RecipientCandidate[]> {
  const n = f.params.length;
  const { rows } = await db.query<RecipientCandidate>(
    `SELECT s.id, s.email, s.email_key, s.name, s.attributes, s.status, sp.reason AS suppression,
            (SELECT count(*) FROM subscriber_lists sl WHERE sl.subscriber_id = s.id AND sl.list_id = ANY($${n + 1}::text[]))::int AS memberships
       FROM subscribers s
       LEFT JOIN suppressions sp ON sp.account_id = s.account_id AND sp.email_key = s.email_key
      WHERE s.account_id = $1 AND s.id > $${n + 2} AND ($${n + 3}::text IS NULL OR s.id <= $${n + 3}) AND s.status <> 'unconfirmed' AND ${f.where}
      ORDER BY s.id
      LIMIT ${limit}`,
    [...f.params, lists, after, upto],
  );
  return rows;
}

// How many messages the audience will get (active, not suppressed) and how many it has in all,
// counted once when the fan-out starts, for progress and ETA; in the same scan, the subscriber
// ids that split it into `parts` ranges of equal size (the last id of each range but the last).
export async function countAudience(db: Queryable, f: AudienceFilter, parts: number): Promise<{ total: number; eligible: number; bounds: string[] }> {
  const fractions = Array.from({ length: parts - 1 }, (_, k) => (k + 1) / parts);
  const bounds = fractions.length > 0 ? `percentile_disc($${f.params.length + 1}::float8[]) WITHIN GROUP (ORDER BY s.id)` : 'NULL::text[]';
  const { rows } = await db.query<{ total: number; eligible: number; bounds: string[] | null }>(
    `SELECT count(*)::int AS total, (count(*) FILTER (WHERE s.status = 'active' AND sp.reason IS NULL))::int AS eligible, ${bounds} AS bounds
       FROM subscribers s
       LEFT JOIN suppressions sp ON sp.account_id = s.account_id AND sp.email_key = s.email_key
      WHERE s.account_id = $1 AND s.status <> 'unconfirmed' AND ${f.where}`,
    fractions.length > 0 ? [...f.params, fractions] : f.params,
  );
  return { total: rows[0].total, eligible: rows[0].eligible, bounds: rows[0].bounds ?? [] };
}

export interface CampaignMessage {
  id: string;
  eventId: string;
  subscriberId: string;
  email: string;
  toDomain: string;
  subject: string;
  mergeData: Record<string, unknown>;
  nextAttemptAt: Date;
}

/**
 * Writes one batch's messages and their `sent` events in ONE statement, with the quota counter
 * when the account has a quota (all or nothing: false when the batch would exceed it, and
 * nothing is written). A message holds its recipient and merge data; its content stays in the
 * campaign. ON CONFLICT on (campaign_id, subscriber_id) is the last line of defence against a
 * second copy; events are written only for messages actually inserted.
 *
 * The same statement adds the batch's `sent` counters to the rollups — exactly what the
 * events_rollup trigger would add for these events (the campaign's counters; the account's,
 * the campaign's and each tag's day), as one upsert each instead of the trigger's per-event
 * join and grouping; the trigger is told to skip this statement (migration 019). Same
 * transaction as the messages, so the counters are as exact as they are.
 */
export async function insertCampaignMessages(
  db: PoolClient, // in the batch's transaction: the trigger setting below is transaction-local
  c: Pick<CampaignRow, 'id' | 'account_id' | 'domain_id' | 'from_email' | 'from_name' | 'reply_to' | 'tags' | 'template_id'>,
  msgs: CampaignMessage[],
  now: Date,
  quota: { month: string; limit: number } | null,
): Promise<{ ok: boolean; inserted: number }> {
  if (msgs.length === 0) return { ok: true, inserted: 0 };
  const params: unknown[] = [
    c.id, c.account_id, c.domain_id, c.from_email, c.from_name, c.reply_to, c.tags, c.template_id, now,
    msgs.map((m) => m.id), msgs.map((m) => m.eventId), msgs.map((m) => m.subscriberId), msgs.map((m) => m.email),
    msgs.map((m) => m.toDomain), msgs.map((m) => m.subject), msgs.map((m) => JSON.stringify(m.mergeData)), msgs.map((m) => m.nextAttemptAt),
  ];
  const { counter, gate } = quota ? quotaGate(params, '$2', { month: quota.month, count: msgs.length, limit: quota.limit }) : NO_QUOTA;
  // Transaction-local: the events_rollup trigger skips the events this transaction inserts from
  // here on — this statement's, whose counters it writes below. The batch's transaction inserts
  // no other events after it (it only advances the checkpoint and commits); no reset, as each
  // round trip costs milliseconds on a loaded machine.
  await db.query(`SELECT set_config('postline.events_rollup', 'by_caller', true)`);
  const { rows } = await db.query<{ n: number; gated: boolean }>(
    `WITH ${counter}
     v AS (
       SELECT * FROM unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::jsonb[], $17::timestamptz[])
         AS v(id, event_id, subscriber_id, email, to_domain, subject, merge_data, next_attempt_at)
     ),
     m AS (
       INSERT INTO messages (id, account_id, domain_id, status, from_email, from_name, to_email, to_domain, reply_to, subject, tags,
                             template_id, campaign_id, subscriber_id, merge_data, next_attempt_at, created_at)
       SELECT v.id, $2, $3, 'queued', $4, $5, v.email, v.to_domain, $6, v.subject, $7, $8, $1, v.subscriber_id, v.merge_data,
              v.next_attempt_at, $9
         FROM v WHERE ${gate}
       ON CONFLICT (campaign_id, subscriber_id) WHERE campaign_id IS NOT NULL DO NOTHING
       RETURNING id
     ),
     e AS (
       INSERT INTO events (id, account_id, message_id, campaign_id, type, email, data, occurred_at)
       SELECT v.event_id, $2, v.id, $1, 'sent', v.email, jsonb_build_object('campaignId', $1::text), $9
         FROM v JOIN m ON m.id = v.id
       RETURNING 1
     ),
     k AS (SELECT count(*) AS n FROM e),
     campaign_counts AS (
       INSERT INTO campaign_stats AS t (campaign_id, shard, sent)
       SELECT $1, pg_backend_pid() % 4, k.n FROM k WHERE k.n > 0
       ON CONFLICT (campaign_id, shard) DO UPDATE SET sent = t.sent + EXCLUDED.sent
       RETURNING 1
     ),
     daily AS (
       INSERT INTO stats_daily AS t (account_id, scope, day, shard, sent)
       SELECT $2, sc.scope, ($9::timestamptz AT TIME ZONE 'UTC')::date, pg_backend_pid() % 4, k.n * sc.times
         FROM k, (SELECT scope, count(*) AS times
                    FROM unnest(ARRAY['', 'c:' || $1::text] || ARRAY(SELECT 't:' || tag FROM unnest($7::text[]) AS tag)) AS scope
                   GROUP BY scope) sc
        WHERE k.n > 0
        ORDER BY sc.scope
       ON CONFLICT (account_id, scope, day, shard) DO UPDATE SET sent = t.sent + EXCLUDED.sent
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM m)::int AS n, (${gate}) AS gated,
            (SELECT count(*) FROM campaign_counts) + (SELECT count(*) FROM daily) AS rolled_up`,
    params,
  );
  return { ok: rows[0].gated, inserted: rows[0].n };
}

// At the end of a batch, before its checkpoint: the campaign row locked, so a pause or cancel
// committed while the batch was written is seen here (the caller then rolls the batch back), and
// the parts' advances queue here rather than overlap (the last part to finish sees the others
// finished: each later statement of its transaction reads what they committed).
export async function lockCampaignForAdvance(db: Queryable, campaignId: string): Promise<{ status: string; throttle_next_at: Date | null } | null> {
  const { rows } = await db.query('SELECT status, throttle_next_at FROM campaigns WHERE id = $1 FOR UPDATE', [campaignId]);
  return rows[0] ?? null;
}

export interface BatchProgress {
  part: number;
  /** The checkpoint the batch started from: the fence against a holder whose lease was taken over. */
  after: string;
  lastSubscriberId: string;
  queued: number;
  skipped: { suppressed: number; unsubscribed: number; bounced: number; complained: number; duplicate: number };
  /** This part is finished (a finished part is deleted). */
  done: boolean;
  throttleNextAt: Date | null;
  leaseUntil: Date;
}

// The part's checkpoint and the campaign's counters, in the batch's transaction, after
// lockCampaignForAdvance. Fenced by the part's lease holder and checkpoint: a worker whose lease
// was taken over writes nothing and gets false (its transaction's messages are rolled back with it
// by the caller). When the last part finishes, the fan-out is done and the audience size becomes
// the exact count.
export async function advanceFanOut(db: Queryable, campaignId: string, workerId: string, p: BatchProgress): Promise<boolean> {
  const { rowCount } = await db.query(
    `WITH advanced AS (
       UPDATE campaign_fanout_parts SET last_subscriber_id = $4, locked_until = $13
        WHERE NOT $11 AND campaign_id = $1 AND part = $2 AND locked_by = $3 AND last_subscriber_id = $14
       RETURNING part
     ),
     finished AS (
       DELETE FROM campaign_fanout_parts
        WHERE $11 AND campaign_id = $1 AND part = $2 AND locked_by = $3 AND last_subscriber_id = $14
       RETURNING part
     ),
     mine AS (SELECT part FROM advanced UNION ALL SELECT part FROM finished),
     fin AS (
       SELECT EXISTS (SELECT 1 FROM finished)
              AND NOT EXISTS (SELECT 1 FROM campaign_fanout_parts WHERE campaign_id = $1 AND part <> $2) AS all_done
     )
     UPDATE campaigns
        SET queued = queued + $5,
            skipped_suppressed = skipped_suppressed + $6, skipped_unsubscribed = skipped_unsubscribed + $7,
            skipped_bounced = skipped_bounced + $8, skipped_complained = skipped_complained + $9,
            skipped_duplicate = skipped_duplicate + $10,
            fanout_done = fin.all_done, throttle_next_at = $12,
            audience_size = CASE WHEN fin.all_done THEN queued + $5 ELSE audience_size END
       FROM fin
      WHERE id = $1 AND status = 'sending' AND EXISTS (SELECT 1 FROM mine)`,
    [campaignId, p.part, workerId, p.lastSubscriberId, p.queued, p.skipped.suppressed, p.skipped.unsubscribed, p.skipped.bounced,
      p.skipped.complained, p.skipped.duplicate, p.done, p.throttleNextAt, p.leaseUntil, p.after],
  );
  return (rowCount ?? 0) > 0;
}

export async function setAudienceSize(db: Queryable, campaignId: string, size: number): Promise<void> {
  await db.query('UPDATE campaigns SET audience_size = $2 WHERE id = $1 AND audience_size IS NULL', [campaignId, size]);
}
