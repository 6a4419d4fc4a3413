import type { Page } from '../../db/pagination.js';
import type { MergeWarning } from '../merge/checks.js';
import { automationMergeWarnings } from './merge-check.js';
import { keyset } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import {
  deleteAutomation as deleteRow, existingListIds, existingTemplateIds, insertAutomation, selectAutomation, selectAutomationPage,
  selectAccountOfAutomation, selectRunCounters, selectStepStats, updateAutomation as updateRow, type AutomationPatch, type AutomationRow, type RunCountersRow,
  type StepStatsRow,
} from '../../db/queries/automations/definitions.js';
import { invalid, notFound, type FieldError } from '../../errors.js';
import { newId } from '../../ids.js';
import { findSendingDomain } from '../domains/domains.js';
import {
  AUTOMATION_LIMITS, checkEventName, describePosition, formatPosition, unstorablePath, parseSteps, REENTRY, sendPositions, throwIfErrors,
  type Reentry, type References, type Step,
} from './definition.js';
import { parseRule, type RuleGroup } from './rules.js';

/** Automation definitions: create, read, change, delete (docs/automations.md). */

export interface Automation {
  id: string;
  name: string;
  status: 'active' | 'paused';
  trigger: { event: string; filter: RuleGroup | null };
  steps: Step[];
  reentry: Reentry;
  counters: {
    runsStarted: number;
    runsCompleted: number;
    runsExited: number;
    runsFailed: number;
    /** In progress now: started and not yet finished. */
    runsInProgress: number;
    /** One entry per send step, in step order. */
    sends: { step: string; sent: number; skipped: number; delivered: number; opened: number; clicked: number }[];
  };
  createdAt: string;
  updatedAt: string;
}

export interface AutomationInput {
  name?: unknown;
  status?: unknown;
  trigger?: unknown;
  steps?: unknown;
  reentry?: unknown;
}

const NO_RUNS: RunCountersRow = { started: 0, completed: 0, exited: 0, failed: 0 };

export function toAutomation(r: AutomationRow, runs: RunCountersRow, stats: StepStatsRow[]): Automation {
  const steps = r.steps as Step[];
  const byPath = new Map(stats.map((s) => [s.path, s]));
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    trigger: { event: r.trigger_event, filter: (r.trigger_filter as RuleGroup | null) ?? null },
    steps,
    reentry: r.reentry,
    counters: {
      runsStarted: runs.started,
      runsCompleted: runs.completed,
      runsExited: runs.exited,
      runsFailed: runs.failed,
      runsInProgress: runs.started - runs.completed - runs.exited - runs.failed,
      sends: sendPositions(steps).map((p) => {
        const s = byPath.get(formatPosition(p));
        return { step: describePosition(p), sent: s?.sent ?? 0, skipped: s?.skipped ?? 0, delivered: s?.delivered ?? 0, opened: s?.opened ?? 0, clicked: s?.clicked ?? 0 };
      }),
    },
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Checked {
  name?: string;
  status?: 'active' | 'paused';
  trigger?: { event: string; filter: RuleGroup | null };
  steps?: Step[];
  reentry?: Reentry;
}

/** Shape and semantics of the given fields, then the references that need the database. */
async function check(db: Queryable, accountId: string, input: AutomationInput, creating: boolean): Promise<Checked> {
  const errors: FieldError[] = [];
  const refs: References = { templates: [], lists: [], senders: [] };
  const out: Checked = {};
  const nul = unstorablePath(input, '');
  if (nul) throw invalid(nul, 'must not contain NUL characters or lone surrogates');
  if (input.name !== undefined || creating) {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name.length === 0 || name.length > AUTOMATION_LIMITS.name) errors.push({ field: 'name', message: `must be 1 to ${AUTOMATION_LIMITS.name} characters` });
    else out.name = name;
  }
  if (input.status !== undefined) {
    if (input.status !== 'active' && input.status !== 'paused') errors.push({ field: 'status', message: 'must be "active" or "paused"' });
    else out.status = input.status;
  }
  if (input.reentry !== undefined) {
    if (!REENTRY.includes(input.reentry as Reentry)) errors.push({ field: 'reentry', message: `must be one of ${REENTRY.join(', ')}` });
    else out.reentry = input.reentry as Reentry;
  }
  if (input.trigger !== undefined || creating) {
    const t = input.trigger;
    if (!isObject(t)) errors.push({ field: 'trigger', message: 'must be {event, filter?}' });
    else {
      for (const k of Object.keys(t)) if (k !== 'event' && k !== 'filter') errors.push({ field: `trigger.${k}`, message: 'is not a known field' });
      const problem = checkEventName(t.event);
      if (problem) errors.push({ field: 'trigger.event', message: problem });
      const filter = t.filter === undefined || t.filter === null ? null : parseRule(t.filter, 'trigger.filter', errors);
      out.trigger = { event: t.event as string, filter };
    }
  }
  if (input.steps !== undefined || creating) out.steps = parseSteps(input.steps, 'steps', errors, refs);
  throwIfErrors(errors);

  const templates = await existingTemplateIds(db, accountId, refs.templates.map((r) => r.id));
  for (const r of refs.templates) if (!templates.has(r.id)) errors.push({ field: r.path, message: `no template ${r.id} in this account` });
  const lists = await existingListIds(db, accountId, refs.lists.map((r) => r.id));
  for (const r of refs.lists) if (!lists.has(r.id)) errors.push({ field: r.path, message: `no list ${r.id} in this account` });
  const domains = new Map<string, boolean>();
  for (const r of refs.senders) {
    const domain = r.email.slice(r.email.lastIndexOf('@') + 1).toLowerCase();
    if (!domains.has(domain)) domains.set(domain, (await findSendingDomain(db, accountId, r.email)) !== null);
    if (!domains.get(domain)) errors.push({ field: r.path, message: 'must be on a verified domain of the account' });
  }
  throwIfErrors(errors);
  return out;
}

/** A saved automation and its merge-field warnings (merge-check.ts). */
export type SavedAutomation = Automation & { warnings: MergeWarning[] };

export async function createAutomation(db: Queryable, accountId: string, input: AutomationInput, now: Date): Promise<SavedAutomation> {
  const c = await check(db, accountId, input, true);
  const row = {
    id: newId('aut'),
    account_id: accountId,
    name: c.name!,
    status: c.status ?? 'active',
    trigger_event: c.trigger!.event,
    trigger_filter: c.trigger!.filter,
    steps: c.steps!,
    reentry: c.reentry ?? 'after_exit',
    created_at: now,
    updated_at: now,
  };
  await insertAutomation(db, row);
  return { ...toAutomation(row, NO_RUNS, []), warnings: await automationMergeWarnings(db, accountId, row.steps) };
}

export async function getAutomation(db: Queryable, accountId: string, id: string): Promise<Automation> {
  const row = await selectAutomation(db, accountId, id);
  if (!row) throw notFound(`automation ${id}`);
  const runs = (await selectRunCounters(db, [row.id])).get(row.id) ?? NO_RUNS;
  return toAutomation(row, runs, (await selectStepStats(db, [row.id])).get(row.id) ?? []);
}

/** limit + 1 automations from the page's position; the HTTP layer trims and makes the cursor. */
export async function listAutomations(db: Queryable, accountId: string, page: Page): Promise<Automation[]> {
  const k = keyset(page, 'id', 2);
  const rows = await selectAutomationPage(db, accountId, { ...k, limit: page.limit });
  const ids = rows.map((r) => r.id);
  const [runs, stats] = [await selectRunCounters(db, ids), await selectStepStats(db, ids)];
  return rows.map((r) => toAutomation(r, runs.get(r.id) ?? NO_RUNS, stats.get(r.id) ?? []));
}

/**
 * Changes the given fields. New steps apply to runs from their next step on: a waiting run
 * keeps its position, so a run whose position no longer exists completes when it wakes.
 */
export async function updateAutomation(db: Queryable, accountId: string, id: string, input: AutomationInput, now: Date): Promise<SavedAutomation> {
  if (!(await selectAutomation(db, accountId, id))) throw notFound(`automation ${id}`);
  const c = await check(db, accountId, input, false);
  const patch: AutomationPatch = {
    name: c.name, status: c.status, reentry: c.reentry, steps: c.steps,
    ...(c.trigger ? { trigger_event: c.trigger.event, trigger_filter: c.trigger.filter } : {}),
  };
  await updateRow(db, accountId, id, patch, now);
  const saved = await getAutomation(db, accountId, id);
  return { ...saved, warnings: await automationMergeWarnings(db, accountId, saved.steps) };
}

/** Deletes the definition with its runs and their history. */
export async function deleteAutomation(db: Queryable, accountId: string, id: string): Promise<void> {
  if (!(await deleteRow(db, accountId, id))) throw notFound(`automation ${id}`);
}

/** For the CLI, which names an automation by id alone. */
export async function accountOfAutomation(db: Queryable, id: string): Promise<string> {
  const accountId = await selectAccountOfAutomation(db, id);
  if (!accountId) throw notFound(`automation ${id}`);
  return accountId;
}
