import { notifySoon } from '../../db/notify.js';
import { GroupCommit } from '../../db/group-commit.js';
import { afterCommit, withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { addRunCounters, selectTriggered, type AutomationRow } from '../../db/queries/automations/definitions.js';
import {
  addressLockKeys, exitRunsOfAddress, insertRunSteps, selectPriorRuns, startRunsAndWake, type RunRow,
} from '../../db/queries/automations/runs.js';
import { selectSubscriberByKey, selectSubscribersByKeys, type SubscriberRow } from '../../db/queries/subscribers.js';
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

function toRuleSubscriber(s: SubscriberRow): RuleSubscriber {
  return { name: s.name, status: s.status, createdAt: s.created_at, lists: s.lists, attributes: s.attributes };
}

export async function loadRuleSubscriber(db: Queryable, accountId: string, emailKey: string): Promise<RuleSubscriber | null> {
  const s = await selectSubscriberByKey(db, accountId, emailKey);
  return s ? toRuleSubscriber(s) : null;
}

/** One trigger of a batch: its account, its checked input and the address's matching key. */
export interface PendingTrigger {
  accountId: string;
  input: TriggerInput;
  emailKey: string;
  now: Date;
}

const addressOf = (t: PendingTrigger) => `${t.accountId} ${t.emailKey}`;

/**
 * Decides, for a batch of triggers in order, which automations each one starts a run of:
 * filter matches and reentry allows it. The batch behaves exactly as its triggers one after
 * the other: a run started by an earlier trigger of the batch counts as "in progress" for a
 * later one of the same address. Each address of the batch is locked by the first statement
 * (addressLockKeys), so concurrent batches and single triggers see each other's runs.
 */
async function matchAutomations(db: Queryable, batch: PendingTrigger[]): Promise<AutomationRow[][]> {
  const pairs = [...new Map(batch.map((t) => [`${t.accountId} ${t.input.event}`, { accountId: t.accountId, event: t.input.event }])).values()];
  const all = [...new Map(batch.map((t) => [addressOf(t), { accountId: t.accountId, emailKey: t.emailKey }])).values()];
  const triggered = await selectTriggered(db, pairs, addressLockKeys(all));
  const candidatesOf = batch.map((t) => triggered.get(`${t.accountId} ${t.input.event}`) ?? []);
  const concerned = batch.filter((_, i) => candidatesOf[i].length > 0);
  if (concerned.length === 0) return batch.map(() => []);
  const addresses = [...new Map(concerned.map((t) => [addressOf(t), { accountId: t.accountId, emailKey: t.emailKey }])).values()];
  const needSubscriber = concerned.filter((t) => (triggered.get(`${t.accountId} ${t.input.event}`) ?? []).some((a) => a.trigger_filter && ruleNeedsSubscriber(a.trigger_filter as RuleGroup)));
  const subscribers = await selectSubscribersByKeys(db, [...new Map(needSubscriber.map((t) => [addressOf(t), { accountId: t.accountId, emailKey: t.emailKey }])).values()]);
  const limited = [...new Set(candidatesOf.flat().filter((a) => a.reentry !== 'always').map((a) => a.id))];
  const prior = await selectPriorRuns(db, addresses, limited);
  return batch.map((t, i) => {
    const candidates = candidatesOf[i];
    if (candidates.length === 0) return [];
    const sub = subscribers.get(addressOf(t));
    const ctx = { email: t.input.email, data: t.input.data ?? {}, subscriber: sub ? toRuleSubscriber(sub) : null, opened: false, clicked: false, waitOutcome: null, now: t.now };
    return candidates.filter((a) => {
      const filter = a.trigger_filter as RuleGroup | null;
      if (filter && !evaluateRule(filter, ctx)) return false;
      if (a.reentry === 'always') return true;
      const key = `${addressOf(t)} ${a.id}`;
      const p = prior.get(key);
      if (p && (a.reentry === 'never' || p.open)) return false;
      // This trigger starts a run: later triggers of the batch see it in progress.
      prior.set(key, { open: true });
      return true;
    });
  });
}

/**
 * Starts the runs and wakes the waiting ones for a batch of checked triggers, in the caller's
 * transaction, with a handful of statements whatever the batch size (the API group-commits
 * concurrent triggers through this; docs/decisions/0014-automation-runs.md, addendum): one
 * statement reads the candidates and takes the address locks, one reads prior runs (only for
 * automations with a reentry limit), one writes runs, wake-ups and counters. Results are
 * in batch order. The runs are due at once; the worker performs their steps after commit.
 */
export async function triggerEvents(db: Queryable, batch: PendingTrigger[]): Promise<TriggerResult[]> {
  if (batch.length === 0) return [];
  const matched = await matchAutomations(db, batch);
  const runsOf = batch.map((t, i): RunRow[] => matched[i].map((a) => ({
    id: newId('run'),
    account_id: t.accountId,
    automation_id: a.id,
    email: t.input.email.trim(),
    email_key: t.emailKey,
    data: t.input.data ?? {},
    status: 'active',
    position: '0',
    due_at: t.now,
    wait_event: null,
    wait_outcome: null,
    exit_reason: null,
    started_at: t.now,
    updated_at: t.now,
    finished_at: null,
  })));
  const runs = runsOf.flat();
  // Each (address, event) wakes once, at its first trigger in the batch: the later ones would
  // find no run still waiting for it, as they would one after the other.
  const firstOf = new Map<string, number>();
  batch.forEach((t, i) => {
    const key = `${addressOf(t)} ${t.input.event}`;
    if (!firstOf.has(key)) firstOf.set(key, i);
  });
  const wakes = [...firstOf.values()].map((i) => ({ accountId: batch[i].accountId, emailKey: batch[i].emailKey, event: batch[i].input.event, now: batch[i].now }));
  const resumedOf = batch.map(() => 0);
  for (const r of await startRunsAndWake(db, runs, wakes)) resumedOf[firstOf.get(`${r.account_id} ${r.email_key} ${r.event}`)!]++;
  if (runs.length > 0 || resumedOf.some((n) => n > 0)) afterCommit(db, (pool) => notifySoon(pool, 'postline_automations'));
  return batch.map((t, i) => ({
    event: t.input.event, email: t.input.email, runs: runsOf[i].map((r) => ({ id: r.id, automationId: r.automation_id })), resumed: resumedOf[i],
  }));
}

/** One trigger, in the caller's transaction (built-in events, the CLI). */
export async function triggerEvent(db: Queryable, accountId: string, input: TriggerInput, now: Date): Promise<TriggerResult> {
  const emailKey = checkTriggerInput(input);
  return (await triggerEvents(db, [{ accountId, input, emailKey, now }]))[0];
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
  return exitRunsOfAddresses(db, accountId, [address.ok ? address.value.key : email.trim().toLowerCase()], reason, now);
}

/** exitRunsOnUnsubscribe for many addresses of an account at once (by matching key). */
export async function exitRunsOfAddresses(db: Queryable, accountId: string, emailKeys: string[], reason: 'unsubscribe' | 'complaint', now: Date): Promise<number> {
  const exited = await exitRunsOfAddress(db, accountId, emailKeys, reason === 'unsubscribe' ? 'unsubscribed' : 'complained', now);
  if (exited.length === 0) return 0;
  await insertRunSteps(db, exited.map((r) => ({
    run_id: r.id, path: r.position, type: 'exit', outcome: 'exited', detail: { reason }, message_id: null, at: now,
  })));
  const perAutomation = new Map<string, number>();
  for (const r of exited) perAutomation.set(r.automation_id, (perAutomation.get(r.automation_id) ?? 0) + 1);
  await addRunCounters(db, [...perAutomation].map(([automationId, n]) => ({ automationId, exited: n })));
  return exited.length;
}

/**
 * POST /automations/trigger's batches: one per process (the API's), shared by its requests.
 * Concurrent triggers are written together: one transaction of a few statements per batch
 * instead of one per request (bench/automations). A batch is applied exactly as its triggers
 * one after the other (triggerEvents), the triggers of one address stay in arrival order
 * across overlapping batches (keyOf), and each request answers only after its commit.
 * One write in flight, not two: a batch costs the same few round trips whatever its size,
 * so letting triggers gather behind the current write halves the queries per trigger; on
 * the 2-core bench p99 fell from 274 ms to 48–99 ms at 500/s (docs/benchmarks.md).
 */
export function triggerBatches(pool: Pool): GroupCommit<PendingTrigger, TriggerResult> {
  return new GroupCommit<PendingTrigger, TriggerResult>(
    (batch) => withTransaction(pool, (tx) => triggerEvents(tx, batch)),
    { maxBatch: 200, maxInFlight: 1, keyOf: (t) => `${t.accountId} ${t.emailKey}` },
  );
}
