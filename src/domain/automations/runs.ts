import { keyset, type Page } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import { addRunCounters, selectAutomation } from '../../db/queries/automations/definitions.js';
import {
  insertRunSteps, saveRun, selectRun, selectRunPage, selectRunSteps, type RunRow, type RunStatus, type RunStepRow,
} from '../../db/queries/automations/runs.js';
import { AppError, notFound } from '../../errors.js';
import { describePosition, parsePosition } from './definition.js';

/** Runs as the API shows them: list, detail with history, cancel. */

export interface Run {
  id: string;
  automationId: string;
  email: string;
  data: Record<string, unknown>;
  status: RunStatus;
  position: string | null;
  waitingFor: string | null;
  wakesAt: string | null;
  exitReason: string | null;
  startedAt: string;
  finishedAt: string | null;
}

export interface RunStep {
  step: string;
  type: string;
  outcome: string;
  detail: Record<string, unknown>;
  messageId: string | null;
  at: string;
}

export function toRun(r: RunRow): Run {
  const finished = r.finished_at !== null;
  return {
    id: r.id,
    automationId: r.automation_id,
    email: r.email,
    data: r.data,
    status: r.status,
    position: finished ? null : describePosition(parsePosition(r.position)),
    waitingFor: r.wait_event,
    wakesAt: r.status === 'waiting' && r.due_at ? r.due_at.toISOString() : null,
    exitReason: r.exit_reason,
    startedAt: r.started_at.toISOString(),
    finishedAt: r.finished_at?.toISOString() ?? null,
  };
}

function toRunStep(s: RunStepRow): RunStep {
  return { step: describePosition(parsePosition(s.path)), type: s.type, outcome: s.outcome, detail: s.detail, messageId: s.message_id, at: s.at.toISOString() };
}

async function requireAutomation(db: Queryable, accountId: string, automationId: string): Promise<void> {
  if (!(await selectAutomation(db, accountId, automationId))) throw notFound(`automation ${automationId}`);
}

/** limit + 1 runs of an automation from the page's position, optionally by status. */
export async function listRuns(db: Queryable, accountId: string, automationId: string, status: RunStatus | undefined, page: Page): Promise<Run[]> {
  await requireAutomation(db, accountId, automationId);
  const k = keyset(page, 'id', 4);
  return (await selectRunPage(db, accountId, automationId, status ?? null, { ...k, limit: page.limit })).map(toRun);
}

export async function getRun(db: Queryable, accountId: string, automationId: string, runId: string): Promise<Run & { steps: RunStep[] }> {
  const run = await selectRun(db, accountId, automationId, runId);
  if (!run) throw notFound(`run ${runId}`);
  return { ...toRun(run), steps: (await selectRunSteps(db, run.id)).map(toRunStep) };
}

/**
 * Ends a run in progress (status exited, reason "cancelled"). The row lock waits for an engine
 * pass holding the run, so a cancel never interleaves with a step. A finished run is a 409.
 */
export async function cancelRun(db: Queryable, accountId: string, automationId: string, runId: string, now: Date): Promise<Run & { steps: RunStep[] }> {
  const run = await selectRun(db, accountId, automationId, runId, true);
  if (!run) throw notFound(`run ${runId}`);
  if (run.status !== 'active' && run.status !== 'waiting') throw new AppError('conflict', `run ${runId} already ended (${run.status})`);
  Object.assign(run, { status: 'exited', exit_reason: 'cancelled', due_at: null, wait_event: null, updated_at: now, finished_at: now });
  await saveRun(db, run);
  await insertRunSteps(db, [{ run_id: run.id, path: run.position, type: 'cancel', outcome: 'exited', detail: { reason: 'cancelled' }, message_id: null, at: now }]);
  await addRunCounters(db, [{ automationId, exited: 1 }]);
  return getRun(db, accountId, automationId, runId);
}
