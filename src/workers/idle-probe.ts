/**
 * The idle probe: one statement a second (src/db/queries/idle-work.ts) says which of four
 * polled loops — the automation engine, the triggers queued by imports, the double opt-in
 * mails, the campaign step — has work, and wakes only those. Each of them polled on its own
 * and found nothing on a worker with no automation, no double opt-in list and no campaign
 * under way: the first three with a claim in a transaction (BEGIN, a locking read, COMMIT),
 * the campaign step with five statements: about 12 statements a second per worker, now 1
 * (docs/decisions/0046-worker-statements-planned-once.md). The loops keep a slow timer of
 * their own (SAFETY_POLL_MS) in case the probe fails; notifications still wake them at once.
 */
import type { IdleWork } from '../db/queries/idle-work.js';
import { selectIdleWork } from '../db/queries/idle-work.js';
import type { WorkerDeps } from './deps.js';
import { startLoop, type Loop } from './loop.js';

/** How often the probe looks: the loops it stands for polled every second (the mails every two). A woken loop runs at once. */
export const IDLE_PROBE_MS = 1_000;
/** The probed loops' own timer, behind the probe. */
export const SAFETY_POLL_MS = 30_000;

export function startIdleProbe(deps: Pick<WorkerDeps, 'pool' | 'clock'>, targets: Record<keyof IdleWork, Loop>, intervalMs: number, onError: (name: string, err: unknown) => void): Loop {
  return startLoop('idle-probe', intervalMs, async () => {
    const work = await selectIdleWork(deps.pool, deps.clock.now());
    for (const key of Object.keys(targets) as (keyof IdleWork)[]) if (work[key]) targets[key].wake();
  }, onError);
}
