import { notifySoon } from '../../db/notify.js';
import { afterCommit, type Queryable } from '../../db/pool.js';
import { addRunCounters, selectTriggered, type AutomationRow } from '../../db/queries/automations/definitions.js';
import { exitRunsOfAddress, insertRuns, insertRunSteps, selectPriorRuns, wakeWaitingRuns, type RunRow } from '../../db/queries/automations/runs.js';
import { selectSubscriberByKey } from '../../db/queries/subscribers.js';
import { AppError, invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import { parseEmailAddress } from '../email-address.js';
import { checkEventName, unstorablePath } from './definition.js';
import { evaluateRule, ruleNeedsSubscriber, type RuleGroup, type RuleSubscriber } from './rules.js';

/**
 * Triggering: an event for an address starts a run of every active automation listening for
 * it whose filter matches and whose reentry rule allows it, and wakes that address's runs
 * waiting for the event. Called by POST /api/v1/automations/trigger and by the platform's
 * built-in events (subscriber.created, email.opened, email.clicked, subscriber.unsubscribed),
 * always in the transaction that makes the change the event describes.
 */

export const BUILT_IN_EVENTS = ['subscriber.created', 'email.opened', 'email.clicked', 'subscriber.unsubscribed'] as const;
export const TRIGGER_DATA_MAX_BYTES = 32 * 1024;

export interface TriggerInput {
  event: string;
  email: string;
  data?: Record<string, unknown>;
}

export interface TriggerResult {
  event: string;
  email: string;
  runs: { id: string; automationId: string }[];
  resumed: number;
}

/** Request checks shared by the live and sandbox paths; returns the address's matching key. */
export function checkTriggerInput(input: TriggerInput): string {
  const eventProblem = checkEventName(input.event);
  if (eventProblem) throw invalid('event', eventProblem);
  const address = parseEmailAddress(input.email);
  if (!address.ok) throw invalid('email', address.message);
  if (input.data !== undefined) {
    const bad = unstorablePath(input.data, 'data');
    if (bad) throw invalid(bad, 'must not contain NUL characters or lone surrogates');
    if (Buffer.byteLength(JSON.stringify(input.data)) > TRIGGER_DATA_MAX_BYTES) throw invalid('data', `must be at most ${TRIGGER_DATA_MAX_BYTES} bytes as JSON`);
  }
  return address.value.key;
}

export async function loadRuleSubscriber(db: Queryable, accountId: string, emailKey: string): Promise<RuleSubscriber | null> {
  const s = await selectSubscriberByKey(db, accountId, emailKey);
  return s ? { name: s.name, status: s.status, createdAt: s.created_at, lists: s.lists, attributes: s.attributes } : null;
}

/**
 * Which of the active automations for this event would start a run for this address now:
 * filter matches and reentry allows it. With `lock`, concurrent triggers for the same address
 * are serialised first (a transaction-scoped advisory lock on account and address), so two
 * simultaneous triggers cannot both pass a "never" or "after_exit" check.
 */
async function matchingAutomations(db: Queryable, accountId: string, emailKey: string, input: TriggerInput, now: Date, lock: boolean): Promise<AutomationRow[]> {
  const candidates = await selectTriggered(db, accountId, input.event);
  if (candidates.length === 0) return [];
  if (lock) await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`automation-run:${accountId}:${emailKey}`]);
  const filters = candidates.map((a) => a.trigger_filter as RuleGroup | null);
  const subscriber = filters.some((f) => f && ruleNeedsSubscriber(f)) ? await loadRuleSubscriber(db, accountId, emailKey) : null;
  const ctx = { email: input.email, data: input.data ?? {}, subscriber, opened: false, clicked: false, waitOutcome: null, now };
  const passing = candidates.filter((a, i) => !filters[i] || evaluateRule(filters[i]!, ctx));
  const reentryLimited = passing.filter((a) => a.reentry !== 'always').map((a) => a.id);
  const prior = reentryLimited.length > 0 ? await selectPriorRuns(db, accountId, emailKey, reentryLimited) : new Map();
  return passing.filter((a) => {
    const p = prior.get(a.id);
    if (!p || a.reentry === 'always') return true;
    return a.reentry === 'after_exit' && !p.open;
  });
}

/** Test keys: how many automations would start a run; nothing is written or locked. */
export async function countMatchingAutomations(db: Queryable, accountId: string, input: TriggerInput, now: Date): Promise<number> {
  const key = checkTriggerInput(input);
  return (await matchingAutomations(db, accountId, key, input, now, false)).length;
}

/**
 * Starts the runs and wakes the waiting ones, in the caller's transaction. The runs are due at
 * once; the worker performs their steps after commit (it is woken then).
 */
export async function triggerEvent(db: Queryable, accountId: string, input: TriggerInput, now: Date): Promise<TriggerResult> {
  const emailKey = checkTriggerInput(input);
  const matched = await matchingAutomations(db, accountId, emailKey, input, now, true);
  const runs: RunRow[] = matched.map((a) => ({
    id: newId('run'),
    account_id: accountId,
    automation_id: a.id,
    email: input.email.trim(),
    email_key: emailKey,
    data: input.data ?? {},
    status: 'active',
    position: '0',
    due_at: now,
    wait_event: null,
    wait_outcome: null,
    exit_reason: null,
    started_at: now,
    updated_at: now,
    finished_at: null,
  }));
  await insertRuns(db, runs);
  const resumed = await wakeWaitingRuns(db, accountId, emailKey, input.event, now);
  await addRunCounters(db, runs.map((r) => ({ automationId: r.automation_id, started: 1 })));
  if (runs.length + resumed.length > 0) afterCommit(db, (pool) => notifySoon(pool, 'postline_automations'));
  return { event: input.event, email: input.email, runs: runs.map((r) => ({ id: r.id, automationId: r.automation_id })), resumed: resumed.length };
}

/**
 * A built-in event: like triggerEvent, but never fails the change it comes with (an address
 * the trigger refuses simply starts nothing).
 */
export async function fireBuiltInEvent(
  db: Queryable,
  accountId: string,
  event: (typeof BUILT_IN_EVENTS)[number],
  email: string,
  data: Record<string, unknown>,
  now: Date,
): Promise<void> {
  try {
    await triggerEvent(db, accountId, { event, email, data }, now);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
  }
}

/**
 * An unsubscribe (or complaint) for an address ends its runs in progress, each with a history
 * line, in the transaction that records it.
 */
export async function exitRunsOnUnsubscribe(db: Queryable, accountId: string, email: string, reason: 'unsubscribe' | 'complaint', now: Date): Promise<number> {
  const address = parseEmailAddress(email);
  const key = address.ok ? address.value.key : email.trim().toLowerCase();
  const exited = await exitRunsOfAddress(db, accountId, key, reason === 'unsubscribe' ? 'unsubscribed' : 'complained', now);
  if (exited.length === 0) return 0;
  await insertRunSteps(db, exited.map((r) => ({
    run_id: r.id, path: r.position, type: 'exit', outcome: 'exited', detail: { reason }, message_id: null, at: now,
  })));
  const perAutomation = new Map<string, number>();
  for (const r of exited) perAutomation.set(r.automation_id, (perAutomation.get(r.automation_id) ?? 0) + 1);
  await addRunCounters(db, [...perAutomation].map(([automationId, n]) => ({ automationId, exited: n })));
  return exited.length;
}
