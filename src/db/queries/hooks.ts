import { keyset, type Page } from '../pagination.js';
import { notifySoon } from '../notify.js';
import { afterCommit, type Queryable } from '../pool.js';

export interface HookRow {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  /** Ciphertext (keyring purpose 'webhook-secret'). */
  secret: string;
  status: 'active' | 'disabled';
  disabled_reason: string | null;
  disabled_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'id, account_id, url, events, secret, status, disabled_reason, disabled_at, created_at';

// A new hook is due at once; it has nothing to deliver until an event is recorded after it.
export async function insertHook(
  db: Queryable,
  h: { id: string; accountId: string; url: string; events: string[]; secret: string; createdAt: Date },
): Promise<HookRow> {
  const { rows } = await db.query<HookRow>(
    `INSERT INTO hooks (id, account_id, url, events, secret, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING ${COLUMNS}`,
    [h.id, h.accountId, h.url, h.events, h.secret, h.createdAt],
  );
  afterCommit(db, (pool) => notifySoon(pool, 'postline_hooks'));
  return rows[0];
}

// Scoped by account: another account's hook id is simply not found.
export async function selectHook(db: Queryable, accountId: string, id: string): Promise<HookRow | null> {
  const { rows } = await db.query<HookRow>(`SELECT ${COLUMNS} FROM hooks WHERE account_id = $1 AND id = $2`, [accountId, id]);
  return rows[0] ?? null;
}

/** One page of an account's hooks, keyset on the time-ordered id (limit + 1 rows; the caller trims). */
export async function selectHookPage(db: Queryable, accountId: string, page: Page): Promise<HookRow[]> {
  const k = keyset(page, 'id', 2);
  const { rows } = await db.query<HookRow>(
    `SELECT ${COLUMNS} FROM hooks WHERE account_id = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT $${2 + k.params.length}`,
    [accountId, ...k.params, page.limit + 1],
  );
  return rows;
}

// Its queue and attempt log go with it (ON DELETE CASCADE); a batch in flight finds no hook
// when it completes and records nothing.
export async function deleteHookRow(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM hooks WHERE account_id = $1 AND id = $2', [accountId, id]);
  return (rowCount ?? 0) > 0;
}

// Takes effect for the next batch; one already in flight was signed with the old secret.
export async function updateHookSecret(db: Queryable, accountId: string, id: string, secret: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE hooks SET secret = $3 WHERE account_id = $1 AND id = $2', [accountId, id, secret]);
  return (rowCount ?? 0) > 0;
}

/**
 * Re-enables a disabled hook: active again, its failure count reset and due now, so the batch
 * that was undelivered when it was disabled goes first. Events recorded while it was disabled
 * were never queued for it (the queue trigger only feeds active hooks). An active hook is
 * left as it is (its backoff untouched); null when no such hook in the account.
 */
export async function enableHookRow(db: Queryable, accountId: string, id: string, now: Date): Promise<HookRow | null> {
  const { rows } = await db.query<HookRow>(
    `WITH enabled AS (
       UPDATE hooks SET status = 'active', disabled_reason = NULL, disabled_at = NULL, attempts = 0,
              next_attempt_at = $3::timestamptz, lease_token = NULL
        WHERE account_id = $1 AND id = $2 AND status = 'disabled'
        RETURNING ${COLUMNS})
     SELECT * FROM enabled
     UNION ALL
     SELECT ${COLUMNS} FROM hooks WHERE account_id = $1 AND id = $2 AND NOT EXISTS (SELECT 1 FROM enabled)`,
    [accountId, id, now],
  );
  afterCommit(db, (pool) => notifySoon(pool, 'postline_hooks'));
  return rows[0] ?? null;
}

// Whether any hook is active, in any account: the worker's dispatcher skips the wake-ups of
// new events while none is (workers/presence.ts). Not scoped by account on purpose: it reads
// no tenant's data, only whether the dispatcher has anything to do.
export async function anyActiveHook(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM hooks WHERE status = 'active') AS any`);
  return rows[0].any;
}

// Operator tools (the CLI) are given a hook id only; the API always knows the account.
export async function selectHookAccount(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ account_id: string }>('SELECT account_id FROM hooks WHERE id = $1', [id]);
  return rows[0]?.account_id ?? null;
}

export interface DeliveryRow {
  id: string;
  hook_id: string;
  attempted_at: Date;
  attempt: number;
  outcome: 'delivered' | 'retrying' | 'failed' | 'disabled' | 'test';
  status_code: number | null;
  duration_ms: number;
  event_count: number;
  first_event_id: string | null;
  last_event_id: string | null;
  error: string | null;
  next_attempt_at: Date | null;
}

export interface NewDelivery {
  id: string;
  hookId: string;
  attemptedAt: Date;
  attempt: number;
  outcome: DeliveryRow['outcome'];
  statusCode: number | null;
  durationMs: number;
  eventCount: number;
  firstEventId: string | null;
  lastEventId: string | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

/** Parameters $1…$12 of a delivery row, in the column order of DELIVERY_INSERT. */
export function deliveryParams(d: NewDelivery): unknown[] {
  return [d.id, d.hookId, d.attemptedAt, d.attempt, d.outcome, d.statusCode, d.durationMs, d.eventCount, d.firstEventId, d.lastEventId, d.error, d.nextAttemptAt];
}

/**
 * Logs an attempt, only while the hook exists (a hook deleted during its attempt logs nothing).
 * Shared with queue/webhooks.ts, which runs it in the same statement as the outcome.
 */
export const DELIVERY_INSERT = `INSERT INTO hook_deliveries
    (id, hook_id, attempted_at, attempt, outcome, status_code, duration_ms, event_count, first_event_id, last_event_id, error, next_attempt_at)
  SELECT $1::text, $2::text, $3::timestamptz, $4::integer, $5::text, $6::integer, $7::integer, $8::integer, $9::text, $10::text, $11::text, $12::timestamptz
   WHERE EXISTS (SELECT 1 FROM hooks WHERE id = $2::text)`;

export async function insertDelivery(db: Queryable, d: NewDelivery): Promise<void> {
  await db.query(DELIVERY_INSERT, deliveryParams(d));
}

/** One page of a hook's attempt log, keyset on the time-ordered id. */
export async function selectDeliveryPage(db: Queryable, hookId: string, page: Page): Promise<DeliveryRow[]> {
  const k = keyset(page, 'id', 2);
  const { rows } = await db.query<DeliveryRow>(
    `SELECT * FROM hook_deliveries WHERE hook_id = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT $${2 + k.params.length}`,
    [hookId, ...k.params, page.limit + 1],
  );
  return rows;
}

// Maintenance: the attempt log is for debugging recent deliveries; 30 days is what peers keep.
// Ids are time-ordered, but attempted_at is the honest clock here (test sends, retries).
export async function purgeDeliveries(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM hook_deliveries WHERE attempted_at < $1', [before]);
  return rowCount ?? 0;
}
