import type { Config } from '../../config.js';
import { notifySoon } from '../../db/notify.js';
import { afterCommit, withTransaction, type Pool, type PoolClient } from '../../db/pool.js';
import { getAccount } from '../../db/queries/accounts.js';
import {
  addRunCounters, addStepStats, type AutomationRow, type RunCounterDelta, type StepStatsDelta,
} from '../../db/queries/automations/definitions.js';
import {
  claimDueRuns, insertRunSteps, saveRuns, selectRunEngagement, type NewRunStep, type RunRow,
} from '../../db/queries/automations/runs.js';
import { AppError } from '../../errors.js';
import { findSendingDomain, type SendingDomain } from '../domains/domains.js';
import type { TrackingLinks } from '../tracking/links.js';
import {
  enterBranch, formatPosition, nextPosition, parseDuration, parsePosition, stepAt,
  type ConditionStep, type Position, type SendStep, type Step, type WaitStep,
} from './definition.js';
import { evaluateRule, ruleNeedsEngagement, ruleNeedsSubscriber } from './rules.js';
import { performSend, performUpdateSubscriber, type StepContext, type SubscriberWrites } from './steps.js';
import { loadRuleSubscriber } from './trigger.js';

/**
 * The run engine. Each pass claims a batch of due runs (FOR UPDATE SKIP LOCKED) and, in that
 * one transaction, moves every run as far as it goes now: through sends, conditions and
 * subscriber updates, until it enters a wait, exits or completes. The run's new position,
 * the messages its sends queued, its history and the counters commit together; a worker
 * killed anywhere in between rolls the whole batch back and its runs are due again, so no
 * step is lost and none is performed twice (docs/decisions/0014-automation-runs.md).
 */

export interface EngineDeps {
  pool: Pool;
  config: Config;
  links: TrackingLinks;
  now: () => Date;
  /** What update_subscriber steps write (audience/subscribers.ts's subscriberWritesForAutomations). */
  subscribers: SubscriberWrites;
}

export const ENGINE_BATCH = 200;
/** No tree of 100 steps needs more; a guard against a definition bug looping a run. */
const MAX_STEPS_PER_PASS = 250;

interface Batch {
  /** Runs whose new state is written at the end of the pass, in one statement. */
  saved: Map<string, RunRow>;
  history: NewRunStep[];
  counters: Map<string, RunCounterDelta>;
  stats: StepStatsDelta[];
  sent: number;
}

function count(batch: Batch, automationId: string, field: 'completed' | 'exited' | 'failed'): void {
  const c = batch.counters.get(automationId) ?? { automationId };
  c[field] = (c[field] ?? 0) + 1;
  batch.counters.set(automationId, c);
}

/** One pass: returns the number of runs claimed (a full batch means more may be due). */
export async function runDueAutomations(deps: EngineDeps, limit = ENGINE_BATCH): Promise<number> {
  const now = deps.now();
  return withTransaction(deps.pool, async (tx) => {
    const runs = await claimDueRuns(tx, now, limit);
    if (runs.length === 0) return 0;
    const automations = await loadAutomations(tx, [...new Set(runs.map((r) => r.automation_id))]);
    const quotas = new Map<string, number | null>();
    const domains = new Map<string, Promise<SendingDomain | null>>();
    const findDomain = (accountId: string, fromEmail: string) => {
      const key = `${accountId} ${fromEmail.slice(fromEmail.lastIndexOf('@') + 1).toLowerCase()}`;
      if (!domains.has(key)) domains.set(key, findSendingDomain(tx, accountId, fromEmail));
      return domains.get(key)!;
    };
    const batch: Batch = { saved: new Map(), history: [], counters: new Map(), stats: [], sent: 0 };
    for (const run of runs) {
      const automation = automations.get(run.automation_id)!;
      if (!quotas.has(run.account_id)) quotas.set(run.account_id, (await getAccount(tx, run.account_id))?.monthly_quota ?? null);
      const ctx: StepContext = { db: tx, config: deps.config, links: deps.links, now, monthlyQuota: quotas.get(run.account_id)!, findDomain,
        subscribers: deps.subscribers };
      // An update_subscriber step can fire a built-in event (subscriber.created) that wakes
      // runs of this batch already moved: their states are written first, outside any run's
      // savepoint, so the wake-up applies to what they became.
      if (batch.saved.size > 0 && mayFireEvents(automation)) {
        await saveRuns(tx, [...batch.saved.values()]);
        batch.saved.clear();
      }
      // A savepoint per run: an unexpected error fails that run alone, not the batch. Taken
      // before the run's first statement only: a run that just enters a wait, exits or
      // completes writes nothing until the end of the pass, so it needs none (and a pure
      // error before any statement left nothing to roll back).
      const savepoint = new RunSavepoint(tx);
      const mark = { history: batch.history.length, stats: batch.stats.length, sent: batch.sent, counters: structuredClone(batch.counters) };
      try {
        await advance(ctx, run, automation, batch, savepoint);
        await savepoint.release();
      } catch (err) {
        await savepoint.rollback();
        batch.history.length = mark.history;
        batch.stats.length = mark.stats;
        batch.sent = mark.sent;
        batch.counters = mark.counters;
        await fail(tx, run, batch, now, run.position, 'error', { error: err instanceof Error ? err.message : String(err) });
      }
    }
    await saveRuns(tx, [...batch.saved.values()]);
    await insertRunSteps(tx, batch.history);
    await addStepStats(tx, batch.stats);
    await addRunCounters(tx, [...batch.counters.values()]);
    if (batch.sent > 0) {
      afterCommit(tx, (pool) => {
        notifySoon(pool, 'postline_messages');
        notifySoon(pool, 'postline_events');
      });
    }
    return runs.length;
  });
}

/** The savepoint of one run in a pass, taken lazily before the run's first statement. */
class RunSavepoint {
  private taken = false;
  constructor(private readonly tx: PoolClient) {}
  async take(): Promise<void> {
    if (this.taken) return;
    await this.tx.query('SAVEPOINT run');
    this.taken = true;
  }
  async release(): Promise<void> {
    if (this.taken) await this.tx.query('RELEASE SAVEPOINT run');
  }
  async rollback(): Promise<void> {
    if (this.taken) await this.tx.query('ROLLBACK TO SAVEPOINT run');
  }
}

const firesEvents = new WeakMap<AutomationRow, boolean>();
/** Whether a run of this automation can fire events itself (it has an update_subscriber step). */
function mayFireEvents(automation: AutomationRow): boolean {
  let v = firesEvents.get(automation);
  if (v === undefined) {
    v = JSON.stringify(automation.steps).includes('"update_subscriber"');
    firesEvents.set(automation, v);
  }
  return v;
}

async function loadAutomations(tx: PoolClient, ids: string[]): Promise<Map<string, AutomationRow>> {
  const { rows } = await tx.query<AutomationRow>('SELECT * FROM automations WHERE id = ANY($1::text[])', [ids]);
  return new Map(rows.map((r) => [r.id, r]));
}

async function fail(tx: PoolClient, run: RunRow, batch: Batch, now: Date, path: string, type: string, detail: Record<string, unknown>): Promise<void> {
  Object.assign(run, { status: 'failed', due_at: null, wait_event: null, exit_reason: String(detail.error ?? detail.reason ?? 'failed'), updated_at: now, finished_at: now });
  batch.saved.set(run.id, run);
  batch.history.push({ run_id: run.id, path, type, outcome: 'failed', detail, message_id: null, at: now });
  count(batch, run.automation_id, 'failed');
}

/** One line of a run's history, at the pass's time. */
type RunLog = (p: Position, type: string, outcome: string, detail?: Record<string, unknown>, messageId?: string | null) => void;
type WaitOutcome = RunRow['wait_outcome'];

/** Moves one run from its position until it waits or finishes. */
async function advance(ctx: StepContext, run: RunRow, automation: AutomationRow, batch: Batch, savepoint: RunSavepoint): Promise<void> {
  const steps = automation.steps as Step[];
  const now = ctx.now;
  const log: RunLog = (p, type, outcome, detail = {}, messageId = null) =>
    batch.history.push({ run_id: run.id, path: formatPosition(p), type, outcome, detail, message_id: messageId, at: now });
  let pos: Position | null = parsePosition(run.position);
  // A waiting run that is due: its wait ends here, by event (set by the trigger) or timeout.
  let leaving = run.status === 'waiting';
  let waitOutcome = run.wait_outcome;
  for (let i = 0; i < MAX_STEPS_PER_PASS; i++) {
    const step: Step | null = pos && stepAt(steps, pos);
    if (!pos || !step) {
      // Past the last step (or the definition changed under a waiting run): done.
      completeRun(run, batch, pos, waitOutcome, now);
      return;
    }
    switch (step.type) {
      case 'wait': {
        if (leaving) {
          leaving = false;
          waitOutcome = leaveWait(run, step, pos, waitOutcome, log);
          pos = nextPosition(steps, pos);
          continue;
        }
        startWaiting(run, batch, step, pos, waitOutcome, now, log);
        return;
      }
      case 'send': {
        await savepoint.take();
        if (!(await sendStep(ctx, run, automation, step, batch, pos, log))) return;
        pos = nextPosition(steps, pos);
        continue;
      }
      case 'condition': {
        const yes = await conditionHolds(ctx, run, step, waitOutcome, savepoint);
        log(pos, 'condition', yes ? 'then' : 'else');
        pos = enterBranch(steps, pos, yes ? 'then' : 'else');
        continue;
      }
      case 'update_subscriber': {
        await savepoint.take();
        const detail = await performUpdateSubscriber(ctx, run, step);
        log(pos, 'update_subscriber', 'updated', detail);
        pos = nextPosition(steps, pos);
        continue;
      }
      case 'exit': {
        exitRun(run, batch, pos, now, log);
        return;
      }
    }
  }
  throw new AppError('internal_error', `run ${run.id} did not settle within ${MAX_STEPS_PER_PASS} steps`);
}

/** The run is past its last step: completed where it stands. */
function completeRun(run: RunRow, batch: Batch, pos: Position | null, waitOutcome: WaitOutcome, now: Date): void {
  Object.assign(run, { status: 'completed', position: pos ? formatPosition(pos) : run.position, due_at: null, wait_event: null, wait_outcome: waitOutcome, updated_at: now, finished_at: now });
  batch.saved.set(run.id, run);
  count(batch, run.automation_id, 'completed');
}

/** A due waiting run leaves its wait step; returns how the wait ended (its event came, or its timeout). */
function leaveWait(run: RunRow, step: WaitStep, pos: Position, waitOutcome: WaitOutcome, log: RunLog): WaitOutcome {
  if ('until' in step) {
    waitOutcome = run.wait_event === null && run.wait_outcome === 'event' ? 'event' : 'timeout';
    log(pos, 'wait', waitOutcome === 'event' ? 'resumed' : 'timed_out', { until: step.until.event });
  } else {
    log(pos, 'wait', 'resumed');
  }
  run.wait_event = null;
  return waitOutcome;
}

/** The run enters a wait step: due again when its duration (or its event's timeout) has passed. */
function startWaiting(run: RunRow, batch: Batch, step: WaitStep, pos: Position, waitOutcome: WaitOutcome, now: Date, log: RunLog): void {
  const ms = parseDuration('until' in step ? step.until.timeout : step.duration)!;
  const wakesAt = new Date(now.getTime() + ms);
  Object.assign(run, {
    status: 'waiting', position: formatPosition(pos), due_at: wakesAt, wait_event: 'until' in step ? step.until.event : null,
    wait_outcome: waitOutcome, updated_at: now,
  });
  batch.saved.set(run.id, run);
  log(pos, 'wait', 'waiting', 'until' in step ? { until: step.until.event, timeout: step.until.timeout, wakesAt } : { duration: step.duration, wakesAt });
}

/** A send step: its message queued (or skipped, with the reason). Returns false when the send failed the run. */
async function sendStep(ctx: StepContext, run: RunRow, automation: AutomationRow, step: SendStep, batch: Batch, pos: Position, log: RunLog): Promise<boolean> {
  const result = await performSend(ctx, run, step);
  if (result.outcome === 'failed') {
    await fail(ctx.db, run, batch, ctx.now, formatPosition(pos), 'send', { reason: result.reason, ...(result.error ? { error: result.error } : {}) });
    return false;
  }
  const path = formatPosition(pos);
  if (result.outcome === 'sent') {
    await result.record(automation.id, path);
    batch.sent++;
    batch.stats.push({ automationId: automation.id, path, sent: 1 });
    log(pos, 'send', 'sent', {}, result.messageId);
  } else {
    batch.stats.push({ automationId: automation.id, path, skipped: 1 });
    log(pos, 'send', 'skipped', { reason: result.reason });
  }
  return true;
}

/** A condition step's answer; the subscriber and the run's engagement are read only when its rule names them. */
async function conditionHolds(ctx: StepContext, run: RunRow, step: ConditionStep, waitOutcome: WaitOutcome, savepoint: RunSavepoint): Promise<boolean> {
  if (ruleNeedsSubscriber(step.if) || ruleNeedsEngagement(step.if)) await savepoint.take();
  const subscriber = ruleNeedsSubscriber(step.if) ? await loadRuleSubscriber(ctx.db, run.account_id, run.email_key) : null;
  const engagement = ruleNeedsEngagement(step.if) ? await selectRunEngagement(ctx.db, run.id) : { opened: false, clicked: false };
  return evaluateRule(step.if, { email: run.email, data: run.data, subscriber, ...engagement, waitOutcome, now: ctx.now });
}

/** An exit step: the run ends here. */
function exitRun(run: RunRow, batch: Batch, pos: Position, now: Date, log: RunLog): void {
  Object.assign(run, { status: 'exited', position: formatPosition(pos), due_at: null, wait_event: null, exit_reason: 'exit step', updated_at: now, finished_at: now });
  batch.saved.set(run.id, run);
  log(pos, 'exit', 'exited');
  count(batch, run.automation_id, 'exited');
}
