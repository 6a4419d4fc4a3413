import type { Queryable } from '../../pool.js';
import { takeOldest } from './queue.js';

export type RunStatus = 'active' | 'waiting' | 'completed' | 'exited' | 'failed';

export interface RunRow {
  id: string;
  account_id: string;
  automation_id: string;
  email: string;
  email_key: string;
  data: Record<string, unknown>;
  status: RunStatus;
  position: string;
  due_at: Date | null;
  wait_event: string | null;
  wait_outcome: 'event' | 'timeout' | null;
  exit_reason: string | null;
  started_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export interface RunStepRow {
  run_id: string;
  seq: number;
  path: string;
  type: string;
  outcome: string;
  detail: Record<string, unknown>;
  message_id: string | null;
  at: Date;
}

export type NewRunStep = Omit<RunStepRow, 'seq'>;

/** One address of one account: what reentry, waits and the per-address lock are about. */
export interface AddressKey {
  accountId: string;
  emailKey: string;
}

/**
 * For each address of a batch of triggers and each of the given automations: whether the
 * address has had a run and whether one is still in progress (what reentry decides on), keyed
 * `account email_key automation`. One statement; each address is one probe of
 * automation_runs_address.
 */
export async function selectPriorRuns(db: Queryable, addresses: AddressKey[], automationIds: string[]): Promise<Map<string, { open: boolean }>> {
  if (addresses.length === 0 || automationIds.length === 0) return new Map();
  const { rows } = await db.query<{ account_id: string; email_key: string; automation_id: string; open: boolean }>(
    `SELECT r.account_id, r.email_key, r.automation_id, bool_or(r.status IN ('active', 'waiting')) AS open
       FROM unnest($1::text[], $2::text[]) AS k(account_id, email_key)
       JOIN automation_runs r ON r.account_id = k.account_id AND r.email_key = k.email_key AND r.automation_id = ANY($3::text[])
      GROUP BY r.account_id, r.email_key, r.automation_id`,
    [addresses.map((a) => a.accountId), addresses.map((a) => a.emailKey), automationIds],
  );
  return new Map(rows.map((r) => [`${r.account_id} ${r.email_key} ${r.automation_id}`, { open: r.open }]));
}

/**
 * The writes of a batch of triggers in one statement (one round trip): the new runs, the
 * started counters (one random stripe per automation, as addRunCounters), and the wake-up of
 * the runs waiting for each (address, event) of the batch: due at that trigger's time, outcome
 * "event". New runs are 'active', so the wake-up never touches them. A run the engine holds
 * (its timeout being handled) is waited for; once that commits its wait_event is NULL and the
 * row no longer matches, so a wait ends exactly once, by event or by timeout. The caller gives
 * each (address, event) once. Returns the runs woken.
 */
export async function startRunsAndWake(
  db: Queryable,
  runs: RunRow[],
  wakes: (AddressKey & { event: string; now: Date })[],
): Promise<{ id: string; account_id: string; email_key: string; event: string }[]> {
  const started = new Map<string, number>();
  for (const r of runs) started.set(r.automation_id, (started.get(r.automation_id) ?? 0) + 1);
  const { rows } = await db.query<{ id: string; account_id: string; email_key: string; event: string }>(
    `WITH started AS (
       INSERT INTO automation_runs SELECT * FROM json_populate_recordset(NULL::automation_runs, $1::json)
     ), counted AS (
       INSERT INTO automation_counters AS c (automation_id, slot, started)
       SELECT d.id, floor(random() * 8)::smallint, d.n FROM unnest($6::text[], $7::bigint[]) AS d(id, n)
       ON CONFLICT (automation_id, slot) DO UPDATE SET started = c.started + EXCLUDED.started
     )
     UPDATE automation_runs r
        SET wait_event = NULL, wait_outcome = 'event', due_at = w.now, updated_at = w.now
       FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS w(account_id, email_key, event, now)
      WHERE r.account_id = w.account_id AND r.email_key = w.email_key AND r.wait_event = w.event AND r.status = 'waiting'
      RETURNING r.id, r.account_id, r.email_key, w.event`,
    [
      JSON.stringify(runs),
      wakes.map((w) => w.accountId), wakes.map((w) => w.emailKey), wakes.map((w) => w.event), wakes.map((w) => w.now),
      [...started.keys()], [...started.values()],
    ],
  );
  return rows;
}

/**
 * The advisory lock keys that serialise the triggers of each address (one per account and
 * address, held to the end of the transaction), so two simultaneous triggers cannot both pass
 * a "never" or "after_exit" check. Sorted: every transaction takes its locks in one order, so
 * two batches sharing addresses cannot deadlock. Taken by selectTriggered's statement.
 */
export function addressLockKeys(addresses: AddressKey[]): string[] {
  return [...new Set(addresses.map((a) => `automation-run:${a.accountId}:${a.emailKey}`))].sort();
}

/**
 * The engine's claim: due runs of active automations, earliest first. The row locks are held
 * until the batch commits, so the steps performed and the run's new position commit together
 * or not at all (a killed worker's transaction rolls back and the runs are due again).
 * SKIP LOCKED lets workers claim side by side. Runs of paused automations stay where they are.
 * Claim shape 1 of docs/architecture.md#background-jobs-one-claimlease-pattern.
 */
export async function claimDueRuns(db: Queryable, now: Date, limit: number): Promise<RunRow[]> {
  const { rows } = await db.query<RunRow>(
    `SELECT r.* FROM automation_runs r
       JOIN automations a ON a.id = r.automation_id AND a.status = 'active'
      WHERE r.due_at <= $1
      ORDER BY r.due_at
      LIMIT $2
      FOR UPDATE OF r SKIP LOCKED`,
    [now, limit],
  );
  return rows;
}

// A run's new state after the engine (or a cancel) moved it.
export async function saveRun(db: Queryable, r: RunRow): Promise<void> {
  await db.query(
    `UPDATE automation_runs SET status = $2, position = $3, due_at = $4, wait_event = $5, wait_outcome = $6,
            exit_reason = $7, updated_at = $8, finished_at = $9
      WHERE id = $1`,
    [r.id, r.status, r.position, r.due_at, r.wait_event, r.wait_outcome, r.exit_reason, r.updated_at, r.finished_at],
  );
}

/**
 * The new states of the runs an engine pass moved, one statement for the pass (the rows are
 * locked by the pass's claim, so nothing else changed them meanwhile).
 */
export async function saveRuns(db: Queryable, runs: RunRow[]): Promise<void> {
  if (runs.length === 0) return;
  await db.query(
    `UPDATE automation_runs r SET status = s.status, position = s.position, due_at = s.due_at, wait_event = s.wait_event,
            wait_outcome = s.wait_outcome, exit_reason = s.exit_reason, updated_at = s.updated_at, finished_at = s.finished_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::timestamptz[])
            AS s(id, status, position, due_at, wait_event, wait_outcome, exit_reason, updated_at, finished_at)
      WHERE r.id = s.id`,
    [
      runs.map((r) => r.id), runs.map((r) => r.status), runs.map((r) => r.position), runs.map((r) => r.due_at), runs.map((r) => r.wait_event),
      runs.map((r) => r.wait_outcome), runs.map((r) => r.exit_reason), runs.map((r) => r.updated_at), runs.map((r) => r.finished_at),
    ],
  );
}

// History rows, numbered after the run's last one (the primary key serves the max).
export async function insertRunSteps(db: Queryable, steps: NewRunStep[]): Promise<void> {
  if (steps.length === 0) return;
  await db.query(
    `INSERT INTO automation_run_steps (run_id, seq, path, type, outcome, detail, message_id, at)
     SELECT s.run_id,
            COALESCE((SELECT max(seq) FROM automation_run_steps h WHERE h.run_id = s.run_id), 0)
              + row_number() OVER (PARTITION BY s.run_id ORDER BY s.ord),
            s.path, s.type, s.outcome, s.detail, s.message_id, s.at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::text[], $7::timestamptz[])
            WITH ORDINALITY AS s(run_id, path, type, outcome, detail, message_id, at, ord)`,
    [
      steps.map((s) => s.run_id), steps.map((s) => s.path), steps.map((s) => s.type), steps.map((s) => s.outcome),
      steps.map((s) => JSON.stringify(s.detail)), steps.map((s) => s.message_id), steps.map((s) => s.at),
    ],
  );
}

// A message sent by a send step, for its counters and the run's engagement.
export async function insertAutomationSend(db: Queryable, s: { messageId: string; accountId: string; automationId: string; runId: string; path: string }): Promise<void> {
  await db.query(
    'INSERT INTO automation_sends (message_id, account_id, automation_id, run_id, path) VALUES ($1, $2, $3, $4, $5)',
    [s.messageId, s.accountId, s.automationId, s.runId, s.path],
  );
}

/**
 * Whether this run's sends were opened / clicked, read from the events themselves (through
 * events_message) rather than from the counters, which the event handler updates a moment later.
 * Opens by machines (data.machine, e.g. Apple Mail Privacy Protection) are not the person
 * opening it, so they do not count (migration 020).
 */
export async function selectRunEngagement(db: Queryable, runId: string): Promise<{ opened: boolean; clicked: boolean }> {
  const { rows } = await db.query<{ opened: boolean; clicked: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM automation_sends s JOIN events e ON e.message_id = s.message_id AND e.type = 'open'
                    AND coalesce(e.data->>'machine', '') <> 'true' WHERE s.run_id = $1) AS opened,
            EXISTS (SELECT 1 FROM automation_sends s JOIN events e ON e.message_id = s.message_id AND e.type = 'click' WHERE s.run_id = $1) AS clicked`,
    [runId],
  );
  return rows[0];
}

export async function selectRun(db: Queryable, accountId: string, automationId: string, runId: string, lock = false): Promise<RunRow | null> {
  const { rows } = await db.query<RunRow>(
    `SELECT * FROM automation_runs WHERE account_id = $1 AND automation_id = $2 AND id = $3${lock ? ' FOR UPDATE' : ''}`,
    [accountId, automationId, runId],
  );
  return rows[0] ?? null;
}

// A run's history, oldest first.
export async function selectRunSteps(db: Queryable, runId: string): Promise<RunStepRow[]> {
  const { rows } = await db.query<RunStepRow>('SELECT * FROM automation_run_steps WHERE run_id = $1 ORDER BY seq', [runId]);
  return rows;
}

// Keyset page of an automation's runs (automation_runs_automation), optionally by status.
export async function selectRunPage(
  db: Queryable,
  accountId: string,
  automationId: string,
  status: RunStatus | null,
  page: { where: string; orderBy: string; params: unknown[]; limit: number },
): Promise<RunRow[]> {
  const { rows } = await db.query<RunRow>(
    `SELECT * FROM automation_runs
      WHERE account_id = $1 AND automation_id = $2 AND ($3::text IS NULL OR status = $3) AND ${page.where}
      ORDER BY ${page.orderBy} LIMIT ${page.limit + 1}`,
    [accountId, automationId, status, ...page.params],
  );
  return rows;
}

/**
 * Ends every run in progress of these addresses (an unsubscribe or complaint; an import that
 * unsubscribes many), in the caller's transaction. Runs the engine holds are waited for, then
 * ended if still in progress.
 */
export async function exitRunsOfAddress(db: Queryable, accountId: string, emailKeys: string[], reason: string, now: Date): Promise<{ id: string; automation_id: string; position: string }[]> {
  if (emailKeys.length === 0) return [];
  const { rows } = await db.query<{ id: string; automation_id: string; position: string }>(
    `UPDATE automation_runs
        SET status = 'exited', exit_reason = $3, due_at = NULL, wait_event = NULL, updated_at = $4, finished_at = $4
      WHERE account_id = $1 AND email_key = ANY($2::text[]) AND status IN ('active', 'waiting')
      RETURNING id, automation_id, position`,
    [accountId, emailKeys, reason, now],
  );
  return rows;
}

export interface QueuedAutomationEvent {
  event_seq: number;
  account_id: string;
  type: 'delivered' | 'open' | 'click';
  email: string;
  message_id: string | null;
  url: string | null;
  occurred_at: Date;
}

/**
 * Takes up to `limit` queued events, oldest first, removing them in the caller's transaction:
 * if handling fails, the rollback puts them back. SKIP LOCKED lets workers take side by side.
 */
export async function takeQueuedEvents(db: Queryable, limit: number): Promise<QueuedAutomationEvent[]> {
  return takeOldest<QueuedAutomationEvent>(db, 'automation_event_queue', 'event_seq', limit);
}

/**
 * Marks an automation send delivered / opened / clicked the first time only; returns the step
 * it belongs to when this event was the first of its kind (so the counter moves once).
 */
export async function markSendEngagement(db: Queryable, messageId: string, type: 'delivered' | 'open' | 'click', at: Date): Promise<{ automation_id: string; path: string } | null> {
  const column = type === 'delivered' ? 'delivered_at' : type === 'open' ? 'opened_at' : 'clicked_at';
  const { rows } = await db.query<{ automation_id: string; path: string }>(
    `UPDATE automation_sends SET ${column} = $2 WHERE message_id = $1 AND ${column} IS NULL RETURNING automation_id, path`,
    [messageId, at],
  );
  return rows[0] ?? null;
}
