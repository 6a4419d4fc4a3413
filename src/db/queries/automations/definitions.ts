import { notifySoon } from '../../notify.js';
import { afterCommit, type Queryable } from '../../pool.js';

export interface AutomationRow {
  id: string;
  account_id: string;
  name: string;
  status: 'active' | 'paused';
  trigger_event: string;
  trigger_filter: unknown;
  steps: unknown;
  reentry: 'never' | 'after_exit' | 'always';
  created_at: Date;
  updated_at: Date;
}

export interface StepStatsRow {
  path: string;
  sent: number;
  skipped: number;
  delivered: number;
  opened: number;
  clicked: number;
}

export interface RunCountersRow {
  started: number;
  completed: number;
  exited: number;
  failed: number;
}

export async function insertAutomation(db: Queryable, r: AutomationRow): Promise<void> {
  // Plain insert; counters get rows as runs start.
  await db.query(
    `INSERT INTO automations (id, account_id, name, status, trigger_event, trigger_filter, steps, reentry, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [r.id, r.account_id, r.name, r.status, r.trigger_event, r.trigger_filter === null ? null : JSON.stringify(r.trigger_filter), JSON.stringify(r.steps), r.reentry, r.created_at, r.updated_at],
  );
  afterCommit(db, (pool) => notifySoon(pool, 'postline_automation_defs'));
}

// Whether recorded events can be queued for the automation engine at all: the queue's trigger
// (migration 020) needs an automation in the event's account or an automation send, which
// lives only as long as its automation; or rows are queued already. The worker's event handler
// skips the wake-ups of new events while this is false (workers/presence.ts). Not scoped by
// account on purpose: it reads no tenant's data.
export async function automationEventsPossible(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM automations) OR EXISTS (SELECT 1 FROM automation_event_queue) AS any`,
  );
  return rows[0].any;
}

// One automation of an account; another account's id is simply not found.
export async function selectAutomation(db: Queryable, accountId: string, id: string, lock = false): Promise<AutomationRow | null> {
  const { rows } = await db.query<AutomationRow>(`SELECT * FROM automations WHERE account_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [accountId, id]);
  return rows[0] ?? null;
}

// Keyset page of an account's automations (automations_account index), limit + 1 rows.
export async function selectAutomationPage(db: Queryable, accountId: string, page: { where: string; orderBy: string; params: unknown[]; limit: number }): Promise<AutomationRow[]> {
  const { rows } = await db.query<AutomationRow>(
    `SELECT * FROM automations WHERE account_id = $1 AND ${page.where} ORDER BY ${page.orderBy} LIMIT ${page.limit + 1}`,
    [accountId, ...page.params],
  );
  return rows;
}

export interface AutomationPatch {
  name?: string;
  status?: 'active' | 'paused';
  trigger_event?: string;
  trigger_filter?: unknown;
  steps?: unknown;
  reentry?: string;
}

// COALESCE keeps the fields not given; the filter has its own flag because NULL is a value.
export async function updateAutomation(db: Queryable, accountId: string, id: string, p: AutomationPatch, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE automations SET
       name = COALESCE($3, name), status = COALESCE($4, status), trigger_event = COALESCE($5, trigger_event),
       trigger_filter = CASE WHEN $6::boolean THEN $7::jsonb ELSE trigger_filter END,
       steps = COALESCE($8::jsonb, steps), reentry = COALESCE($9, reentry), updated_at = $10
     WHERE account_id = $1 AND id = $2`,
    [
      accountId, id, p.name ?? null, p.status ?? null, p.trigger_event ?? null,
      p.trigger_filter !== undefined, p.trigger_filter === undefined || p.trigger_filter === null ? null : JSON.stringify(p.trigger_filter),
      p.steps === undefined ? null : JSON.stringify(p.steps), p.reentry ?? null, now,
    ],
  );
  return (rowCount ?? 0) > 0;
}

// Runs, sends and counters go with it (ON DELETE CASCADE).
export async function deleteAutomation(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM automations WHERE account_id = $1 AND id = $2', [accountId, id]);
  return (rowCount ?? 0) > 0;
}

// The per-send-step counters of one or more automations.
export async function selectStepStats(db: Queryable, automationIds: string[]): Promise<Map<string, StepStatsRow[]>> {
  const { rows } = await db.query<StepStatsRow & { automation_id: string }>(
    'SELECT * FROM automation_step_stats WHERE automation_id = ANY($1::text[])',
    [automationIds],
  );
  const out = new Map<string, StepStatsRow[]>();
  for (const r of rows) out.set(r.automation_id, [...(out.get(r.automation_id) ?? []), r]);
  return out;
}

// The run counters of automations: the sum of their stripes.
export async function selectRunCounters(db: Queryable, automationIds: string[]): Promise<Map<string, RunCountersRow>> {
  const { rows } = await db.query<RunCountersRow & { automation_id: string }>(
    `SELECT automation_id, sum(started)::bigint AS started, sum(completed)::bigint AS completed,
            sum(exited)::bigint AS exited, sum(failed)::bigint AS failed
       FROM automation_counters WHERE automation_id = ANY($1::text[]) GROUP BY automation_id`,
    [automationIds],
  );
  return new Map(rows.map((r) => [r.automation_id, r]));
}

/** One delta per key: an upsert may touch each row only once per statement. */
function sumBy<T extends object>(items: T[], keyOf: (t: T) => string, fields: (keyof T)[]): T[] {
  const out = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    const acc = out.get(key);
    if (!acc) {
      out.set(key, { ...item });
      continue;
    }
    for (const f of fields) (acc[f] as unknown) = ((acc[f] as number | undefined) ?? 0) + ((item[f] as number | undefined) ?? 0);
  }
  return [...out.values()];
}

export interface RunCounterDelta {
  automationId: string;
  started?: number;
  completed?: number;
  exited?: number;
  failed?: number;
}

// Adds to one random stripe per automation (see migration 014), one statement for a batch.
export async function addRunCounters(db: Queryable, changes: RunCounterDelta[]): Promise<void> {
  const deltas = sumBy(changes, (d) => d.automationId, ['started', 'completed', 'exited', 'failed']);
  if (deltas.length === 0) return;
  await db.query(
    `INSERT INTO automation_counters AS c (automation_id, slot, started, completed, exited, failed)
     SELECT d.id, floor(random() * 8)::smallint, d.started, d.completed, d.exited, d.failed
       FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS d(id, started, completed, exited, failed)
     ON CONFLICT (automation_id, slot) DO UPDATE SET
       started = c.started + EXCLUDED.started, completed = c.completed + EXCLUDED.completed,
       exited = c.exited + EXCLUDED.exited, failed = c.failed + EXCLUDED.failed`,
    [
      deltas.map((d) => d.automationId), deltas.map((d) => d.started ?? 0), deltas.map((d) => d.completed ?? 0),
      deltas.map((d) => d.exited ?? 0), deltas.map((d) => d.failed ?? 0),
    ],
  );
}

export interface StepStatsDelta {
  automationId: string;
  path: string;
  sent?: number;
  skipped?: number;
  delivered?: number;
  opened?: number;
  clicked?: number;
}

// Per send step counters, one statement for a batch of changes (engine and event handler).
export async function addStepStats(db: Queryable, changes: StepStatsDelta[]): Promise<void> {
  const deltas = sumBy(changes, (d) => `${d.automationId} ${d.path}`, ['sent', 'skipped', 'delivered', 'opened', 'clicked']);
  if (deltas.length === 0) return;
  await db.query(
    `INSERT INTO automation_step_stats AS s (automation_id, path, sent, skipped, delivered, opened, clicked)
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
     ON CONFLICT (automation_id, path) DO UPDATE SET
       sent = s.sent + EXCLUDED.sent, skipped = s.skipped + EXCLUDED.skipped, delivered = s.delivered + EXCLUDED.delivered,
       opened = s.opened + EXCLUDED.opened, clicked = s.clicked + EXCLUDED.clicked`,
    [
      deltas.map((d) => d.automationId), deltas.map((d) => d.path), deltas.map((d) => d.sent ?? 0), deltas.map((d) => d.skipped ?? 0),
      deltas.map((d) => d.delivered ?? 0), deltas.map((d) => d.opened ?? 0), deltas.map((d) => d.clicked ?? 0),
    ],
  );
}

/**
 * Active automations listening for each (account, event) pair of a batch of triggers, keyed
 * `account event`; each pair is one probe of automations_trigger. With `lockKeys`, the same
 * statement first takes the transaction-scoped advisory locks that serialise the triggers of
 * each address (addressLockKeys in runs.ts says why, and why sorted): one round trip for both.
 * The definitions are read with the statement's snapshot, taken before any lock wait; what
 * the lock protects (the address's runs) is read by the next statement, after it.
 */
export async function selectTriggered(
  db: Queryable,
  pairs: { accountId: string; event: string }[],
  lockKeys: string[] = [],
): Promise<Map<string, AutomationRow[]>> {
  const out = new Map<string, AutomationRow[]>();
  if (pairs.length === 0) return out;
  const { rows } = await db.query<AutomationRow>(
    `WITH locked AS (
       SELECT count(pg_advisory_xact_lock(hashtextextended(s.k, 0))) AS n
         FROM (SELECT k FROM unnest($3::text[]) WITH ORDINALITY AS u(k, i) ORDER BY i) AS s
     )
     SELECT a.* FROM locked, unnest($1::text[], $2::text[]) AS p(account_id, event)
       JOIN automations a ON a.account_id = p.account_id AND a.trigger_event = p.event AND a.status = 'active'
      ORDER BY a.id`,
    [pairs.map((p) => p.accountId), pairs.map((p) => p.event), lockKeys],
  );
  for (const r of rows) {
    const key = `${r.account_id} ${r.trigger_event}`;
    out.set(key, [...(out.get(key) ?? []), r]);
  }
  return out;
}

// Which of these template ids exist in the account (validation of send steps).
export async function existingTemplateIds(db: Queryable, accountId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>('SELECT id FROM templates WHERE account_id = $1 AND id = ANY($2::text[])', [accountId, ids]);
  return new Set(rows.map((r) => r.id));
}

// Which of these list ids exist in the account (validation of update_subscriber steps).
export async function existingListIds(db: Queryable, accountId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>('SELECT id FROM lists WHERE account_id = $1 AND id = ANY($2::text[])', [accountId, ids]);
  return new Set(rows.map((r) => r.id));
}

// The account an automation belongs to (the CLI names automations by id alone).
export async function selectAccountOfAutomation(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ account_id: string }>('SELECT account_id FROM automations WHERE id = $1', [id]);
  return rows[0]?.account_id ?? null;
}
