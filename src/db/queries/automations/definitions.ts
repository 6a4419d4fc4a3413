import type { Queryable } from '../../pool.js';

export interface AutomationRow {
  id: string;
  account_id: string;
  name: string;
  status: 'active' | 'paused';
  trigger_event: string;
  trigger_filter: unknown;
  steps: unknown;
  reentry: 'never' | 'after_exit' | 'always';
  runs_started: number;
  runs_completed: number;
  runs_exited: number;
  runs_failed: number;
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

export async function insertAutomation(db: Queryable, r: Omit<AutomationRow, 'runs_started' | 'runs_completed' | 'runs_exited' | 'runs_failed'>): Promise<void> {
  // Plain insert; the counters start at their defaults.
  await db.query(
    `INSERT INTO automations (id, account_id, name, status, trigger_event, trigger_filter, steps, reentry, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [r.id, r.account_id, r.name, r.status, r.trigger_event, r.trigger_filter === null ? null : JSON.stringify(r.trigger_filter), JSON.stringify(r.steps), r.reentry, r.created_at, r.updated_at],
  );
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

// Active automations of an account listening for one event (automations_trigger index).
export async function selectTriggered(db: Queryable, accountId: string, event: string): Promise<AutomationRow[]> {
  const { rows } = await db.query<AutomationRow>(
    `SELECT * FROM automations WHERE account_id = $1 AND trigger_event = $2 AND status = 'active' ORDER BY id`,
    [accountId, event],
  );
  return rows;
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
