import { runDueAutomations, ENGINE_BATCH, type EngineDeps } from '../domain/automations/engine.js';
import { EVENT_BATCH, handleAutomationEvents } from '../domain/automations/events.js';
import { PENDING_BATCH, runPendingTriggers } from '../domain/automations/pending.js';
import { subscriberWritesForAutomations } from '../domain/audience/subscribers.js';
import { TrackingLinks } from '../domain/tracking/links.js';
import { startLoop, type Loop } from './loop.js';
import { wakeOnEventsWhilePresent } from './presence.js';
import { automationEventsPossible } from '../db/queries/automations/definitions.js';
import type { Notifications } from './notifications.js';
import type { WorkerDeps } from './deps.js';

/** The automation loops; `runs` and `pending` are also woken by the worker's idle probe (./idle-probe.ts). */
export interface AutomationLoops {
  runs: Loop;
  events: Loop;
  pending: Loop;
}

/**
 * The automation loops: the run engine (woken when triggers start or wake runs, and by the
 * worker's one-second idle probe when waits come due), the event handler (woken with the
 * webhook dispatcher on new events) and the queued triggers of imports (woken with the engine,
 * and by the probe). `pollMs` is the engine's and the triggers' own timer, a safety net behind
 * the probe. A full batch means more is waiting: go again at once.
 */
export function startAutomationLoops(deps: WorkerDeps, notifications: Notifications, onError: (name: string, err: unknown) => void, pollMs: number): AutomationLoops {
  const engine: EngineDeps = { pool: deps.pool, config: deps.config, links: new TrackingLinks(deps.config), now: () => deps.clock.now(),
    subscribers: subscriberWritesForAutomations };
  const runs: Loop = startLoop('automation-runs', pollMs, async () => {
    if ((await runDueAutomations(engine)) >= ENGINE_BATCH) runs.wake();
  }, onError);
  const events: Loop = startLoop('automation-events', 1000, async () => {
    if ((await handleAutomationEvents(deps.pool, engine.now)) >= EVENT_BATCH) events.wake();
  }, onError);
  // Triggers queued by imports: starting their runs wakes the engine (afterCommit notify).
  const pending: Loop = startLoop('automation-pending-triggers', pollMs, async () => {
    if ((await runPendingTriggers(deps.pool, engine.now)) >= PENDING_BATCH) pending.wake();
  }, onError);
  notifications.on('postline_automations', () => {
    runs.wake();
    pending.wake();
  });
  // New events wake the event handler only while events can be queued for it at all (an
  // automation exists, or rows are queued): with none, the wake-up after every batch of
  // delivery outcomes was a transaction finding nothing (./presence.ts).
  wakeOnEventsWhilePresent(notifications, {
    present: () => automationEventsPossible(deps.pool),
    changedChannel: 'postline_automation_defs',
    wake: () => events.wake(),
    onError: (err) => onError('automation-events', err),
  });
  return { runs, events, pending };
}
