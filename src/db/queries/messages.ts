import type { Queryable } from '../pool.js';
import { NO_QUOTA, quotaGate } from './quota.js';

/** A messages row as stored (snake_case, as json_populate_recordset expects it). */
export interface MessageRow {
  id: string;
  account_id: string;
  domain_id: string | null;
  status: 'queued' | 'scheduled' | 'sending' | 'delivered' | 'deferred' | 'bounced' | 'failed' | 'suppressed';
  from_email: string;
  from_name: string | null;
  to_email: string;
  to_domain: string;
  cc: string[];
  bcc: string[];
  reply_to: string | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: { filename: string; content: string; contentType?: string }[];
  tags: string[];
  template_id: string | null;
  campaign_id: string | null;
  attempts: number;
  next_attempt_at: Date;
  first_attempt_at: Date | null;
  last_response: string | null;
  last_mx: string | null;
  /** The source (docs/sending-identity.md) of its last attempt; null without sources or before an attempt. */
  source_name?: string | null;
  source_address?: string | null;
  locked_by: string | null;
  scheduled_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
  /** The send this row belongs to (its `to` row's id); null: the row is its own send. */
  group_id?: string | null;
  /** How the send named this row's recipient; null means 'to'. */
  recipient_type?: 'to' | 'cc' | 'bcc' | null;
  /**
   * The send's To header (addresses joined by ", ") when it is not this row's to_email: on a
   * cc or bcc copy, and on every row of an SMTP submission whose To header names others too.
   */
  header_to?: string | null;
  /** Campaign messages: the subscriber, and the merge data rendered at delivery (migration 012). */
  subscriber_id?: string | null;
  merge_data?: { subscriber?: { id: string; email: string; name: string | null; attributes: Record<string, unknown> } } | null;
  /** Per-message tracking switches (migration 023); null or absent: tracked. */
  track_opens?: boolean | null;
  track_clicks?: boolean | null;
  opened_at?: Date | null;
  clicked_at?: Date | null;
  /** The Idempotency-Key claim the send was made under, on its `to` row (migration 028). */
  idempotency_ref?: string | null;
}

export interface SentEventRow {
  id: string;
  account_id: string;
  message_id: string;
  type: 'sent';
  email: string;
  url: null;
  data: Record<string, unknown>;
  occurred_at: Date;
}

/**
 * Accepts messages atomically in ONE statement: the quota counter (when the account has a
 * quota), the message rows and their `sent` events commit together or not at all, and the
 * caller then wakes the workers (db/notify.ts). A single statement is one round trip and needs
 * no explicit transaction. Returns false when the quota would be
 * exceeded (nothing is written then).
 *
 * Accounts without a quota skip the counter: a per-account counter row would serialise all
 * of that account's sends on one row lock. `counted` is how many of the rows use the quota
 * (rows of suppressed recipients are stored but not delivered, so they do not count).
 */
export async function insertAcceptedMessages(
  db: Queryable,
  rows: MessageRow[],
  events: SentEventRow[],
  quota: { accountId: string; month: string; limit: number } | null,
  counted: number = rows.length,
): Promise<boolean> {
  const params: unknown[] = [JSON.stringify(rows), JSON.stringify(events)];
  if (quota) params.push(quota.accountId);
  const { counter, gate } = quota ? quotaGate(params, '$3', { month: quota.month, count: counted, limit: quota.limit }) : NO_QUOTA;
  const { rows: out } = await db.query(
    `WITH ${counter}
     m AS (INSERT INTO messages SELECT * FROM json_populate_recordset(NULL::messages, $1::json) WHERE ${gate} RETURNING 1),
     e AS (
       INSERT INTO events (id, account_id, message_id, type, email, url, data, occurred_at)
       SELECT id, account_id, message_id, type, email, url, data, occurred_at
         FROM json_populate_recordset(NULL::events, $2::json) WHERE ${gate}
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM m) AS n`,
    params,
  );
  return Number(out[0].n) === rows.length;
}

/** What a row of a send gets in place of its status when its recipient is on the suppression list. */
export const SUPPRESSED_ROW = { status: 'suppressed', last_response: 'not sent: the address is on the suppression list' } as const;

/**
 * The accept statement's parts (insertSendsUnlessSuppressed, and with the rate count in front,
 * queries/counted-accepts.ts): its CTEs over parameters $1..$6 (acceptParams) and its result
 * columns. `after` is a condition appended to the rows' source so that it is read only after
 * something else.
 *
 * The rows' html and text bodies travel as two text arrays beside the JSON of the other
 * columns ($5, $6), not inside it: JSON.stringify escaping a 4 KB body cost the API ~8-20 µs
 * per row where the array literal's escaping costs ~1 µs, and PostgreSQL then parses ~1 KB of
 * JSON per row instead of ~5 KB (docs/decisions/0059-accept-cpu-per-request.md). Each
 * row is the record of its bodies (the inner jsonb_populate_record) filled in from its JSON.
 */
export function acceptCtes(after = ''): string {
  return `src AS (
       SELECT r.doc, k.html, k.text, r.doc->>'id' AS id, coalesce(r.doc->>'group_id', r.doc->>'id') AS send_id,
              EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = r.doc->>'account_id' AND s.email_key = k.key) AS suppressed
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS r(doc, i)
         JOIN unnest($2::text[], $5::text[], $6::text[]) WITH ORDINALITY AS k(key, html, text, i) USING (i)${after}
     ),
     sends AS (SELECT send_id FROM src GROUP BY send_id HAVING bool_or(NOT suppressed)),
     m AS (
       INSERT INTO messages
       SELECT p.* FROM src JOIN sends USING (send_id),
         LATERAL jsonb_populate_record(
           jsonb_populate_record(NULL::messages, jsonb_build_object('html', src.html, 'text', src.text)),
           CASE WHEN src.suppressed THEN src.doc || $4::jsonb ELSE src.doc END
         ) AS p
       RETURNING 1
     ),
     e AS (
       INSERT INTO events (id, account_id, message_id, type, email, url, data, occurred_at)
       SELECT id, account_id, message_id, type, email, url, data, occurred_at
         FROM json_populate_recordset(NULL::events, $3::json)
        WHERE message_id IN (SELECT id FROM src JOIN sends USING (send_id) WHERE NOT suppressed)
          AND (SELECT set_config('postline.events_rollup', 'by_caller', true)) IS NOT NULL
       RETURNING account_id, message_id, occurred_at
     ),
     daily AS (
       INSERT INTO stats_daily AS t (account_id, scope, day, shard, sent)
       SELECT e.account_id, sc.scope, (e.occurred_at AT TIME ZONE 'UTC')::date, pg_backend_pid() % 4, count(*)
         FROM e JOIN src ON src.id = e.message_id,
              LATERAL unnest(ARRAY[''] || ARRAY(SELECT 't:' || tag FROM jsonb_array_elements_text(src.doc->'tags') AS tag)) AS sc(scope)
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
       ON CONFLICT (account_id, scope, day, shard) DO UPDATE SET sent = t.sent + EXCLUDED.sent
       RETURNING 1
     )`;
}

export const ACCEPT_RESULT = `(SELECT count(*) FROM daily) AS rolled_up, ARRAY(SELECT id FROM src WHERE suppressed) AS suppressed,
            CASE WHEN EXISTS (SELECT 1 FROM sends) THEN pg_notify('postline_messages', '') END AS wake_messages,
            CASE WHEN EXISTS (SELECT 1 FROM sends) THEN pg_notify('postline_events', '') END AS wake_events`;

const SUPPRESSED_JSON = JSON.stringify(SUPPRESSED_ROW);

/**
 * The accept statement's six parameters: the rows' columns as JSON without their bodies, the
 * suppression keys, the events' JSON, what a suppressed row gets, the rows' html and text.
 */
export function acceptParams(rows: readonly MessageRow[], keys: readonly (string | null)[], events: readonly SentEventRow[]): unknown[] {
  const docs = new Array<MessageRow>(rows.length);
  const htmls = new Array<string | null>(rows.length);
  const texts = new Array<string | null>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    // undefined: JSON.stringify leaves the key out, so the body comes from its array alone.
    docs[i] = { ...row, html: undefined as never, text: undefined as never };
    htmls[i] = row.html;
    texts[i] = row.text;
  }
  return [JSON.stringify(docs), keys, JSON.stringify(events), SUPPRESSED_JSON, htmls, texts];
}

/** How many parameters acceptParams gives: a statement's own come after them. */
export const ACCEPT_PARAM_COUNT = 6;

const INSERT_SENDS_UNLESS_SUPPRESSED = `WITH ${acceptCtes()}\n     SELECT ${ACCEPT_RESULT}`;

/**
 * The send API's accepting statement for accounts without a quota (one group commit of
 * concurrent sends, domain/sending/send-pipeline.ts): the suppression check, the inserts and
 * the workers' wake-up in ONE round trip instead of three (docs/decisions/0043-one-statement-accept.md).
 *
 * `keys[i]` is the suppression key of `rows[i]`'s recipient (null: no key, never suppressed).
 * A row whose recipient is suppressed for its account is stored with SUPPRESSED_ROW's status
 * and no `sent` event; a send (the rows sharing a group, or a row alone) whose every recipient
 * is suppressed stores nothing at all. Returns the ids of the suppressed rows: the caller
 * answers 422 recipient_suppressed for a send whose rows are all among them.
 *
 * The `sent` events are counted into stats_daily by the statement itself (the account's scope
 * and one per tag, as events_rollup would count them) and the generic rollup is told to skip
 * them: `postline.events_rollup = by_caller`, set for this statement's transaction only, as the
 * campaign fan-out does (migration 019). The rollup's join, window sort and grouped upserts were
 * most of PostgreSQL's time per accept (docs/benchmarks.md). Must run as its own transaction.
 *
 * NOTIFY inside the statement is sent by its commit, so the workers wake only once the rows are
 * visible. PostgreSQL serialises the commits of notifying transactions (db/notify.ts); this
 * process has one such statement in flight at a time (GroupCommit), so that costs it nothing.
 */
export async function insertSendsUnlessSuppressed(
  db: Queryable,
  rows: MessageRow[],
  keys: (string | null)[],
  events: SentEventRow[],
): Promise<Set<string>> {
  const { rows: out } = await db.query<{ suppressed: string[] }>({
    // Named: each connection parses and plans it once, not once per group of accepts.
    name: 'insert_sends_unless_suppressed',
    text: INSERT_SENDS_UNLESS_SUPPRESSED,
    values: acceptParams(rows, keys, events),
  });
  return new Set(out[0].suppressed);
}

/**
 * The `to` rows of sends made under these idempotency refs (migration 028): a request that
 * took over an expired claim answers with what the previous owner committed. The partial
 * unique index messages_idempotency_ref serves the lookup.
 */
export async function findSendsByIdempotencyRef(
  db: Queryable, accountId: string, refs: readonly string[],
): Promise<Map<string, Pick<MessageRow, 'id' | 'to_email' | 'subject' | 'scheduled_at'>>> {
  const { rows } = await db.query(
    `SELECT idempotency_ref, id, to_email, subject, scheduled_at FROM messages
      WHERE account_id = $1 AND idempotency_ref = ANY($2::text[])`,
    [accountId, refs],
  );
  return new Map(rows.map((r) => [r.idempotency_ref as string, r]));
}

/** True for the unique violation of a second send under one idempotency ref. */
export function isDuplicateIdempotentSend(err: unknown): boolean {
  return (err as { code?: string; constraint?: string }).code === '23505' && (err as { constraint?: string }).constraint === 'messages_idempotency_ref';
}

/**
 * True for the foreign-key violation of a send whose sender domain was removed after the
 * process looked it up (its cache of verified domains, domain/sending/send-pipeline.ts).
 */
export function isRemovedSenderDomain(err: unknown): boolean {
  return (err as { code?: string }).code === '23503' && (err as { constraint?: string }).constraint === 'messages_domain_id_fkey';
}

// Accepted-this-month count, for quota checks before a batch and for stats.
export async function monthlyUsage(db: Queryable, accountId: string, month: string): Promise<number> {
  const { rows } = await db.query('SELECT sent FROM usage_counters WHERE account_id = $1 AND month = $2::date', [accountId, month]);
  return rows[0]?.sent ?? 0;
}

/**
 * Every column of `messages` besides the content, and the content (html, text, attachments).
 * test/delivery/claim-columns.test.ts checks the two lists against the table, so a migration's
 * new column has to be named here.
 */
export const MESSAGE_COLUMNS = [
  'id', 'account_id', 'domain_id', 'status', 'from_email', 'from_name', 'to_email', 'to_domain', 'cc', 'bcc', 'reply_to', 'subject',
  'headers', 'tags', 'template_id', 'campaign_id', 'attempts', 'next_attempt_at', 'first_attempt_at', 'last_response', 'last_mx',
  'locked_by', 'scheduled_at', 'delivered_at', 'created_at', 'group_id', 'recipient_type', 'header_to', 'track_opens', 'track_clicks',
  'subscriber_id', 'merge_data', 'opened_at', 'clicked_at', 'idempotency_ref', 'source_name', 'source_address',
] as const satisfies readonly (keyof MessageRow)[];
export const MESSAGE_CONTENT = ['html', 'text', 'attachments'] as const satisfies readonly (keyof MessageRow)[];

/**
 * The given columns of a message row `m` with its content, each once: a cc/bcc copy stores no
 * content (migration 011) and reads its group's, `g` being the LEFT JOINed group row
 * (`g.id = m.group_id AND m.group_id <> m.id`).
 */
export function columnsWithContent(columns: readonly string[]): string {
  return [
    ...columns.map((c) => `m.${c}`),
    ...MESSAGE_CONTENT.map((c) => `CASE WHEN g.id IS NULL THEN m.${c} ELSE g.${c} END AS ${c}`),
  ].join(', ');
}

const MESSAGE_WITH_CONTENT = columnsWithContent(MESSAGE_COLUMNS);

export async function getMessage(db: Queryable, accountId: string, id: string): Promise<MessageRow | null> {
  // The cc/bcc copy reads its content from its group row (same account by construction).
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE_WITH_CONTENT}
       FROM messages m LEFT JOIN messages g ON g.id = m.group_id AND m.group_id <> m.id AND g.account_id = m.account_id
      WHERE m.account_id = $1 AND m.id = $2`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

export interface RecipientRow {
  id: string;
  to_email: string;
  recipient_type: 'to' | 'cc' | 'bcc' | null;
  status: MessageRow['status'];
  attempts: number;
  last_response: string | null;
  last_mx: string | null;
  next_attempt_at: Date;
  delivered_at: Date | null;
}

// Every recipient row of one send, `to` first, then in the order the send named them (ids are
// time-ordered and were minted in that order). Scoped by account like every read.
export async function recipientsOfGroup(db: Queryable, accountId: string, groupId: string): Promise<RecipientRow[]> {
  const { rows } = await db.query<RecipientRow>(
    `SELECT id, to_email, recipient_type, status, attempts, last_response, last_mx, next_attempt_at, delivered_at
       FROM messages
      WHERE account_id = $1 AND (id = $2 OR group_id = $2)
      ORDER BY (id = $2) DESC, id`,
    [accountId, groupId],
  );
  return rows;
}

/**
 * One page of an account's messages, keyset-paginated on the time-ordered id. Bodies are
 * left out of lists (they can be megabytes); GET /emails/{id} returns them. Every value,
 * the page size included, is a parameter; only the keyset fragments are SQL text.
 */
export async function listMessages(
  db: Queryable,
  accountId: string,
  f: { status?: string; to?: string; tag?: string },
  page: { where: string; orderBy: string; params: unknown[]; limit: number },
): Promise<Omit<MessageRow, 'html' | 'text' | 'attachments'>[]> {
  const params: unknown[] = [accountId, f.status ?? null, f.to ? f.to.toLowerCase() : null, f.tag ?? null, ...page.params, page.limit + 1];
  // One entry per send (its `to` row; cc/bcc copies are listed under it by GET /emails/{id}),
  // except that `to=` finds an address however the send named it.
  const { rows } = await db.query(
    `SELECT id, account_id, domain_id, status, from_email, from_name, to_email, to_domain, cc, bcc, reply_to, subject,
            headers, tags, template_id, campaign_id, attempts, next_attempt_at, first_attempt_at, last_response, last_mx,
            locked_by, scheduled_at, delivered_at, created_at, group_id, recipient_type, header_to
       FROM messages
      WHERE account_id = $1
        AND ($2::text IS NULL OR status = $2)
        AND (CASE WHEN $3::text IS NULL THEN group_id IS NULL OR group_id = id ELSE lower(to_email) = $3 END)
        AND ($4::text IS NULL OR $4 = ANY(tags))
        AND ${page.where}
      ORDER BY ${page.orderBy}
      LIMIT $${params.length}::int`,
    params,
  );
  return rows;
}

/** Most recent message of an account to an address (FBL matching by address). */
export async function latestMessageTo(db: Queryable, email: string, accountId?: string): Promise<MessageRow | null> {
  const { rows } = await db.query<MessageRow>(
    `SELECT * FROM messages WHERE lower(to_email) = lower($1) AND ($2::text IS NULL OR account_id = $2)
      ORDER BY created_at DESC LIMIT 1`,
    [email, accountId ?? null],
  );
  return rows[0] ?? null;
}

/** A message by id regardless of account: inbound bounces and complaints carry only the id. */
export async function getMessageById(db: Queryable, id: string): Promise<MessageRow | null> {
  const { rows } = await db.query<MessageRow>('SELECT * FROM messages WHERE id = $1', [id]);
  return rows[0] ?? null;
}
