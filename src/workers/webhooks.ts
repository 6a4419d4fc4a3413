/**
 * The webhook dispatcher: lease due hooks, send each its oldest queued events in batches of
 * ≤ 500, record each outcome. One batch in flight per hook keeps each hook's order; hooks run
 * side by side. It wakes on NOTIFY postline_events (event writers poke it after commit, see
 * db/notify.ts; the worker role's one LISTEN connection, workers/notifications.ts, calls wake), whenever a hook is given back (a backlog drains without waiting for a timer),
 * and once a second as a fallback for a lost notification or a backoff that has come due.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import { toApiEvent, type ApiEvent } from '../domain/events.js';
import {
  BATCH_SIZE, classifyAttempt, describeResult, hookSecret, REQUEST_TIMEOUT_MS, webhookRequest,
} from '../domain/webhooks/hooks.js';
import { guardedPost, type PostResult, type Resolver } from '../domain/webhooks/ssrf.js';
import { newId } from '../ids.js';
import { claimDueHooks, completeHookBatch, loadHookBatch, type BatchOutcome, type ClaimedHook } from '../queue/webhooks.js';
import { startLoop, type Loop } from './loop.js';

export interface DispatchDeps {
  config: Pick<Config, 'secret' | 'webhookAllowPrivate'>;
  pool: Pool;
  clock: Clock;
  log?: Pick<Logger, 'warn'>;
}

export interface DispatchOptions {
  /** Hooks leased per claim (the dispatcher's concurrency). */
  maxHooks?: number;
  batchSize?: number;
  /** Batches a worker sends for one hook before giving the lease back (fairness between hooks). */
  batchesPerLease?: number;
  /** How long a claimed hook stays leased; must exceed the request timeout. */
  leaseMs?: number;
  timeoutMs?: number;
  /** DNS for delivery-time checks (tests). */
  resolve?: Resolver;
  /** How often the dispatcher looks for events when nothing wakes it (new events do, by NOTIFY). */
  pollMs?: number;
}

const DEFAULTS = { maxHooks: 8, batchSize: BATCH_SIZE, batchesPerLease: 20, leaseMs: 60_000, timeoutMs: REQUEST_TIMEOUT_MS, pollMs: 1000 };
type Options = typeof DEFAULTS & { resolve?: Resolver };

export interface BatchReport {
  hookId: string;
  events: number;
  outcome: BatchOutcome['kind'];
}

const LOGGED_OUTCOME = { delivered: 'delivered', retry: 'retrying', dropped: 'failed', disabled: 'disabled' } as const;
const NOTHING_TO_SEND: PostResult = { kind: 'response', status: 204, retryAfter: null, location: null, body: '', durationMs: 0 };

/** Signs and posts one batch. Never throws: every failure is a result for the attempt log. */
async function postBatch(deps: DispatchDeps, hook: ClaimedHook, events: ApiEvent[], opts: Options): Promise<PostResult> {
  if (events.length === 0) return NOTHING_TO_SEND;
  try {
    const { body, headers } = webhookRequest(hook.id, events, hookSecret(hook.secret, deps.config));
    return await guardedPost(new URL(hook.url), body, headers, { allowPrivate: deps.config.webhookAllowPrivate, timeoutMs: opts.timeoutMs, resolve: opts.resolve });
  } catch (err) {
    // A secret that no longer decrypts (POSTLINE_SECRET changed): a failure like any other,
    // retried on the schedule, so it shows in the attempt log instead of only in the logs.
    return { kind: 'connection', error: `could not sign the batch: ${(err as Error).message}`, durationMs: 0 };
  }
}

/**
 * Sends a claimed hook's queued events, batch after batch, while they are delivered and more
 * are waiting (up to `batchesPerLease`). The next batch is read while the current one is on
 * the wire; it is sent only once the current one got its 2xx, so order holds. Any other
 * outcome, or an empty queue, gives the hook back.
 */
export async function deliverHookBacklog(deps: DispatchDeps, claimed: ClaimedHook, options: DispatchOptions = {}): Promise<BatchReport[]> {
  const opts: Options = { ...DEFAULTS, ...options };
  const reports: BatchReport[] = [];
  let hook = claimed;
  let queued = await loadHookBatch(deps.pool, hook, opts.batchSize);
  for (;;) {
    const events = queued.flatMap((q) => (q.event ? [toApiEvent(q.event)] : []));
    const mayContinue = queued.length === opts.batchSize && reports.length + 1 < opts.batchesPerLease;
    const attemptedAt = deps.clock.now();
    const [result, next] = await Promise.all([
      postBatch(deps, hook, events, opts),
      mayContinue ? loadHookBatch(deps.pool, hook, opts.batchSize, queued[queued.length - 1].event_seq) : Promise.resolve([]),
    ]);
    const now = deps.clock.now();
    const outcome = classifyAttempt(result, hook.attempts, now);
    const error = events.length === 0 ? 'the queued events no longer exist' : describeResult(result);
    const keep = outcome.kind === 'delivered' && next.length > 0;
    const held = await completeHookBatch(deps.pool, hook, queued.map((q) => q.event_seq), outcome, now, {
      id: newId('dlv'),
      hookId: hook.id,
      attemptedAt,
      attempt: hook.attempts + 1,
      outcome: LOGGED_OUTCOME[outcome.kind],
      statusCode: result.kind === 'response' && events.length > 0 ? result.status : null,
      durationMs: result.durationMs,
      eventCount: events.length,
      firstEventId: events[0]?.id ?? null,
      lastEventId: events.at(-1)?.id ?? null,
      error,
      nextAttemptAt: outcome.kind === 'retry' ? outcome.retryAt : null,
    }, keep ? new Date(now.getTime() + opts.leaseMs) : null);
    reports.push({ hookId: hook.id, events: events.length, outcome: outcome.kind });
    if (outcome.kind !== 'delivered') {
      deps.log?.warn({ hookId: hook.id, events: events.length, attempt: hook.attempts + 1, outcome: outcome.kind, error }, 'webhook batch not delivered');
    }
    if (!keep || !held) return reports;
    hook = { ...hook, attempts: 0 };
    queued = next;
  }
}

/**
 * One dispatch step, awaited to the end: lease the due hooks and send each its backlog (as
 * above). Tests call this directly, with a ManualClock, instead of running the loop.
 */
export async function dispatchOnce(deps: DispatchDeps, options: DispatchOptions = {}): Promise<BatchReport[]> {
  const opts = { ...DEFAULTS, ...options };
  const claimed = await claimDueHooks(deps.pool, deps.clock.now(), opts.maxHooks, opts.leaseMs, randomUUID());
  return (await Promise.all(claimed.map((hook) => deliverHookBacklog(deps, hook, opts)))).flat();
}

/**
 * The worker-role loop. Unlike dispatchOnce, it does not wait for a slow receiver before
 * leasing other hooks: up to `maxHooks` batches are in flight, each freeing its slot (and
 * waking the loop) when done. `stop()` waits for the batches in flight.
 */
export function startWebhookDispatcher(
  deps: DispatchDeps,
  onError: (name: string, err: unknown) => void,
  options: DispatchOptions = {},
): Loop {
  const opts = { ...DEFAULTS, ...options };
  const inFlight = new Set<Promise<void>>();

  const step = async () => {
    const free = opts.maxHooks - inFlight.size;
    if (free <= 0) return;
    const claimed = await claimDueHooks(deps.pool, deps.clock.now(), free, opts.leaseMs, randomUUID());
    for (const hook of claimed) {
      const p: Promise<void> = deliverHookBacklog(deps, hook, opts)
        .then(() => undefined, (err) => onError('webhooks', err))
        .finally(() => {
          inFlight.delete(p);
          loop.wake();
        });
      inFlight.add(p);
    }
  };
  const loop = startLoop('webhooks', opts.pollMs, step, onError);

  return {
    wake: () => loop.wake(),
    async stop() {
      await loop.stop();
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
