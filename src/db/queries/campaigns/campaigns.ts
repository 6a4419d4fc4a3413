import { keyset, type Page } from '../../pagination.js';
import type { Queryable } from '../../pool.js';

export type CampaignStatus = 'draft' | 'scheduled' | 'sending' | 'paused' | 'sent' | 'cancelled';

export interface CampaignAudience {
  lists: string[];
  segment?: string;
  excludeLists?: string[];
}

/** The definition fields a create or a PATCH writes. */
export interface CampaignDefinitionRow {
  name: string;
  subject: string | null;
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  html: string | null;
  text: string | null;
  template_id: string | null;
  variables: Record<string, unknown>;
  audience: CampaignAudience;
  tags: string[];
  headers: Record<string, string>;
  scheduled_at: Date | null;
  throttle: number | null;
  /** Refuse the send when a placeholder renders empty for the audience (domain/campaigns/merge-check.ts). */
  strict: boolean;
}

/** A campaign row: its definition plus the state the send, the fan-out and the report use. */
export interface CampaignRow extends CampaignDefinitionRow {
  id: string;
  account_id: string;
  status: CampaignStatus;
  domain_id: string | null;
  pause_reason: string | null;
  fanout_done: boolean;
  audience_size: number | null;
  queued: number;
  cancelled: number;
  skipped_suppressed: number;
  skipped_unsubscribed: number;
  skipped_bounced: number;
  skipped_complained: number;
  skipped_duplicate: number;
  throttle_next_at: Date | null;
  send_requested_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const DEFINITION_COLUMNS = [
  'name', 'subject', 'from_email', 'from_name', 'reply_to', 'html', 'text', 'template_id', 'variables', 'audience', 'tags', 'headers',
  'scheduled_at', 'throttle', 'strict',
] as const;

/** The definition part of a stored row. */
export function definitionOf(r: CampaignRow): CampaignDefinitionRow {
  return Object.fromEntries(DEFINITION_COLUMNS.map((c) => [c, r[c]])) as unknown as CampaignDefinitionRow;
}

const asParam = (d: CampaignDefinitionRow, c: (typeof DEFINITION_COLUMNS)[number]): unknown =>
  c === 'variables' || c === 'audience' || c === 'headers' ? JSON.stringify(d[c]) : d[c];

export async function insertCampaign(db: Queryable, id: string, accountId: string, d: CampaignDefinitionRow, now: Date): Promise<CampaignRow> {
  const { rows } = await db.query<CampaignRow>(
    `INSERT INTO campaigns (id, account_id, status, ${DEFINITION_COLUMNS.join(', ')}, created_at, updated_at)
     VALUES ($1, $2, 'draft', ${DEFINITION_COLUMNS.map((_, i) => `$${i + 3}`).join(', ')}, $${DEFINITION_COLUMNS.length + 3}, $${DEFINITION_COLUMNS.length + 3})
     RETURNING *`,
    [id, accountId, ...DEFINITION_COLUMNS.map((c) => asParam(d, c)), now],
  );
  return rows[0];
}

export async function selectCampaign(db: Queryable, accountId: string, id: string): Promise<CampaignRow | null> {
  const { rows } = await db.query<CampaignRow>('SELECT * FROM campaigns WHERE account_id = $1 AND id = $2', [accountId, id]);
  return rows[0] ?? null;
}

// The row locked for a state change: concurrent sends, pauses and the fan-out's batches of
// this campaign queue here, so each sees the state the previous one committed.
export async function lockCampaign(db: Queryable, accountId: string, id: string): Promise<CampaignRow | null> {
  const { rows } = await db.query<CampaignRow>('SELECT * FROM campaigns WHERE account_id = $1 AND id = $2 FOR UPDATE', [accountId, id]);
  return rows[0] ?? null;
}

// A keyset page of an account's campaigns (campaigns_account or, filtered, campaigns_account_status).
// Bodies are left out of lists.
export async function selectCampaignPage(db: Queryable, accountId: string, status: CampaignStatus | null, page: Page): Promise<CampaignRow[]> {
  const k = keyset(page, 'id', 3);
  const { rows } = await db.query<CampaignRow>(
    `SELECT *, NULL AS html, NULL AS text FROM campaigns
      WHERE account_id = $1 AND ($2::text IS NULL OR status = $2) AND ${k.where}
      ORDER BY ${k.orderBy} LIMIT ${page.limit + 1}`,
    [accountId, status, ...k.params],
  );
  return rows;
}

// PATCH: the whole merged definition is written back (the domain layer merged and validated it);
// the status guard makes a PATCH that raced with a send fail instead of editing a sending campaign.
export async function updateCampaignDefinition(db: Queryable, accountId: string, id: string, d: CampaignDefinitionRow, now: Date): Promise<CampaignRow | null> {
  const { rows } = await db.query<CampaignRow>(
    `UPDATE campaigns SET ${DEFINITION_COLUMNS.map((c, i) => `${c} = $${i + 3}`).join(', ')}, updated_at = $${DEFINITION_COLUMNS.length + 3}
      WHERE account_id = $1 AND id = $2 AND status IN ('draft', 'scheduled')
     RETURNING *`,
    [accountId, id, ...DEFINITION_COLUMNS.map((c) => asParam(d, c)), now],
  );
  return rows[0] ?? null;
}

export async function deleteCampaignRow(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(`DELETE FROM campaigns WHERE account_id = $1 AND id = $2 AND status IN ('draft', 'scheduled')`, [accountId, id]);
  return (rowCount ?? 0) > 0;
}

export interface SendSnapshot {
  status: 'scheduled' | 'sending';
  domainId: string;
  subject: string | null;
  html: string | null;
  text: string | null;
}

// draft → scheduled | sending, with the content frozen (a template's parts copied in) and the
// sending domain resolved. The caller holds the row lock (lockCampaign).
export async function markCampaignSending(db: Queryable, id: string, s: SendSnapshot, now: Date): Promise<CampaignRow> {
  const { rows } = await db.query<CampaignRow>(
    `UPDATE campaigns
        SET status = $2, domain_id = $3, subject = $4, html = $5, text = $6, send_requested_at = $7, updated_at = $7,
            started_at = CASE WHEN $2 = 'sending' THEN $7::timestamptz END, pause_reason = NULL
      WHERE id = $1
     RETURNING *`,
    [id, s.status, s.domainId, s.subject, s.html, s.text, now],
  );
  return rows[0];
}

export async function setCampaignStatus(
  db: Queryable,
  id: string,
  status: CampaignStatus,
  now: Date,
  extra: { pauseReason?: string | null; finished?: boolean; cancelledMore?: number; throttleNextAt?: Date | null } = {},
): Promise<CampaignRow> {
  // Paused: the fan-out's part leases are freed, so a resume's next claim takes them at once
  // (a holder still running rolls its batch back: fanOutBatch). Cancelled: the parts go.
  const { rows } = await db.query<CampaignRow>(
    `WITH freed AS (
       UPDATE campaign_fanout_parts SET locked_by = NULL, locked_until = NULL WHERE campaign_id = $1 AND $2 = 'paused' RETURNING 1
     ),
     gone AS (
       DELETE FROM campaign_fanout_parts WHERE campaign_id = $1 AND $2 = 'cancelled' RETURNING 1
     )
     UPDATE campaigns
        SET status = $2, updated_at = $3, pause_reason = $4,
            finished_at = CASE WHEN $5 THEN $3::timestamptz ELSE finished_at END,
            cancelled = cancelled + $6,
            throttle_next_at = coalesce($7, throttle_next_at)
      WHERE id = $1
     RETURNING *`,
    [id, status, now, extra.pauseReason ?? null, extra.finished ?? false, extra.cancelledMore ?? 0, extra.throttleNextAt ?? null],
  );
  return rows[0];
}

// ---------------------------------------------------------------------------------------
// Unsent messages of a campaign (index messages_campaign_pending)

// Pause: queued and deferred messages become 'held', which no delivery claim selects; the ones
// a worker holds right now ('sending') finish their attempt.
export async function holdCampaignMessages(db: Queryable, campaignId: string): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE messages SET status = 'held' WHERE campaign_id = $1 AND status IN ('queued', 'scheduled', 'deferred')`,
    [campaignId],
  );
  return rowCount ?? 0;
}

// Resume: held messages are due again, in id order, spaced by the throttle from `from` on
// (interval 0 = all at once). Returns how many were released.
export async function releaseCampaignMessages(db: Queryable, campaignId: string, from: Date, intervalMs: number): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE messages m SET status = 'queued',
            next_attempt_at = $2::timestamptz + make_interval(secs => (h.n - 1) * $3::double precision / 1000)
       FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM messages WHERE campaign_id = $1 AND status = 'held') h
      WHERE m.id = h.id`,
    [campaignId, from, intervalMs],
  );
  return rowCount ?? 0;
}

// Cancel: unsent messages are removed (their count is the report's `cancelled`). Messages in
// flight finish their attempt.
export async function deleteUnsentCampaignMessages(db: Queryable, campaignId: string): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM messages WHERE campaign_id = $1 AND status IN ('queued', 'scheduled', 'deferred', 'held')`,
    [campaignId],
  );
  return rowCount ?? 0;
}

/**
 * The CTEs that settle messages of stopped campaigns, given a CTE `stopped (id,
 * campaign_status)` whose campaign rows the statement has locked: a paused campaign's message
 * becomes 'held' (resume releases it), a cancelled one's is removed and counted as cancelled.
 * Shared by the delivery claim (expired leases) and settleStrayDeferrals.
 */
export const SETTLE_STOPPED = `held AS (
       UPDATE messages m SET status = 'held' FROM stopped s WHERE m.id = s.id AND s.campaign_status = 'paused' RETURNING m.id
     ),
     gone AS (
       DELETE FROM messages m USING stopped s WHERE m.id = s.id AND s.campaign_status = 'cancelled' RETURNING m.campaign_id
     ),
     counted AS (
       UPDATE campaigns c SET cancelled = c.cancelled + g.n
         FROM (SELECT campaign_id, count(*)::int AS n FROM gone GROUP BY campaign_id) g
        WHERE c.id = g.campaign_id
       RETURNING 1
     )`;

/**
 * A message in flight when its campaign was paused or cancelled finishes its attempt; if that
 * attempt was deferred, it would otherwise be retried while the campaign is paused, or after
 * it was cancelled. Called in the transaction that records the deferrals: a paused campaign's
 * stray becomes 'held' (resume releases it), a cancelled one's is removed and counted as
 * cancelled. The campaign row's update lock orders this with pause/cancel (which lock it FOR
 * UPDATE before touching its messages): whichever commits second sees the other's result. Not
 * a share lock: the statement updates the row (the cancelled count), and two share holders
 * upgrading at once deadlock.
 */
export async function settleStrayDeferrals(db: Queryable, messageIds: string[]): Promise<number> {
  if (messageIds.length === 0) return 0;
  const { rows } = await db.query<{ n: number }>(
    `WITH stopped AS (
       SELECT m.id, c.status AS campaign_status
         FROM messages m JOIN campaigns c ON c.id = m.campaign_id
        WHERE m.id = ANY($1::text[]) AND m.status = 'deferred' AND c.status IN ('paused', 'cancelled')
          FOR NO KEY UPDATE OF c
     ),
     ${SETTLE_STOPPED}
     SELECT ((SELECT count(*) FROM held) + (SELECT count(*) FROM gone))::int AS n`,
    [messageIds],
  );
  return rows[0].n;
}

// "Is anything of this campaign still on its way?" — an index probe on messages_campaign_pending.
export async function hasPendingMessages(db: Queryable, campaignId: string): Promise<boolean> {
  const { rows } = await db.query<{ pending: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM messages WHERE campaign_id = $1 AND status IN ('queued', 'scheduled', 'sending', 'deferred', 'held')) AS pending`,
    [campaignId],
  );
  return rows[0].pending;
}

export interface CampaignContentRow {
  id: string;
  account_id: string;
  html: string | null;
  text: string | null;
  variables: Record<string, unknown>;
  headers: Record<string, string>;
}

// What the delivery engine renders a campaign message from (frozen once the campaign is sent).
export async function selectCampaignContent(db: Queryable, id: string): Promise<CampaignContentRow | null> {
  const { rows } = await db.query<CampaignContentRow>('SELECT id, account_id, html, text, variables, headers FROM campaigns WHERE id = $1', [id]);
  return rows[0] ?? null;
}

// The account's campaigns that are sending now (campaigns_account_status).
export async function selectSendingCampaignIds(db: Queryable, accountId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM campaigns WHERE account_id = $1 AND status = 'sending' ORDER BY id`, [accountId]);
  return rows.map((r) => r.id);
}

export interface RecipientRow {
  message_id: string;
  subscriber_id: string;
  email: string;
  status: string;
  attempts: number;
  last_response: string | null;
  delivered_at: Date | null;
  opened_at: Date | null;
  clicked_at: Date | null;
  created_at: Date;
}

// A page of a campaign's recipients: its messages in subscriber id order (the unique index
// messages_campaign_subscriber), optionally of one delivery status.
export async function selectRecipientPage(db: Queryable, accountId: string, campaignId: string, status: string | null, page: Page): Promise<RecipientRow[]> {
  const k = keyset(page, 'subscriber_id', 4);
  const { rows } = await db.query<RecipientRow>(
    `SELECT id AS message_id, subscriber_id, to_email AS email, status, attempts, last_response, delivered_at, opened_at, clicked_at, created_at
       FROM messages
      WHERE campaign_id = $2 AND account_id = $1 AND ($3::text IS NULL OR status = $3) AND ${k.where}
      ORDER BY ${k.orderBy} LIMIT ${page.limit + 1}`,
    [accountId, campaignId, status, ...k.params],
  );
  return rows;
}

// The account of a campaign, for operator tools given only its id.
export async function selectCampaignAccount(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ account_id: string }>('SELECT account_id FROM campaigns WHERE id = $1', [id]);
  return rows[0]?.account_id ?? null;
}
