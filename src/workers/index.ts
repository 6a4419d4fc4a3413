import type { WorkerDeps } from './deps.js';
import { startLoop, type Loop } from './loop.js';
import { runMaintenance } from './maintenance.js';
import { runPendingImports } from '../domain/audience/imports.js';
import { DEFAULT_DELIVERY_OPTIONS, DeliveryEngine } from '../delivery/engine.js';
import { ClaimPacing } from '../delivery/claim-pacing.js';
import { CampaignRenderer } from '../domain/campaigns/content.js';
import { Notifications } from './notifications.js';
import { startWebhookDispatcher } from './webhooks.js';
import { wakeOnEventsWhilePresent } from './presence.js';
import { anyActiveHook } from '../db/queries/hooks.js';
import { startAutomationLoops } from './automations.js';
import { IDLE_PROBE_MS, SAFETY_POLL_MS, startIdleProbe } from './idle-probe.js';
import { sendConfirmationMails } from '../domain/audience/confirmation-mail.js';
import { TrackingLinks } from '../domain/tracking/links.js';
import { withTransaction } from '../db/pool.js';
import { notifySoon } from '../db/notify.js';
import { runCampaignStep } from '../domain/campaigns/runner.js';
import { requireAccount } from '../domain/accounts.js';
import { sendDueTlsReports } from '../delivery/tls-reports/send.js';
import { tlsReportDeps } from '../delivery/tls-reports/deps.js';

export type { WorkerDeps } from './deps.js';

export interface Workers {
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /** How often the delivery loop looks for due mail when nothing wakes it (new mail does, by NOTIFY). */
  deliveryPollMs?: number;
}

/** The worker role: every background loop. Each feature adds its loop here. */
export async function startWorkers(deps: WorkerDeps, opts: WorkerOptions = {}): Promise<Workers> {
  const onError = (name: string, err: unknown) => deps.log.error({ err, loop: name }, 'background loop failed; retrying');
  const notifications = new Notifications(deps.pool);
  const links = new TrackingLinks(deps.config);
  const delivery = new DeliveryEngine({ ...deps, content: (links) => new CampaignRenderer(deps.pool, links) }, {
    ...DEFAULT_DELIVERY_OPTIONS,
    batchSize: deps.config.deliveryConcurrency,
    maxConnectionsPerHost: deps.config.mxConnectionsPerHost,
  });
  // New mail, and room in a gate once the queue was drained: claimed at once by an idle worker,
  // gathered for a moment by a busy one (../delivery/claim-pacing.ts).
  const pacing = new ClaimPacing({ inFlight: () => delivery.inFlightCount, claim: () => deliveryLoop.wake() });
  // Refilling: claims again whenever half of the in-flight batch has finished (and at once
  // after a claim that filled its room, in case more are due), without waiting for the rest.
  const deliveryLoop: Loop = startLoop('delivery', opts.deliveryPollMs ?? 1000, async () => {
    pacing.claimed();
    if ((await delivery.refill((drained) => (drained ? pacing.soon() : deliveryLoop.wake()), (err) => onError('delivery', err))) > 0 && delivery.lastClaimWasFull) deliveryLoop.wake();
  }, onError);
  notifications.on('postline_messages', () => pacing.soon());
  // While this process fans a campaign out, its delivery holds campaign mail (docs/campaigns.md:
  // the fan-out is then done sooner; transactional and automation mail keeps flowing).
  const onFanOut = (running: boolean) => {
    if (delivery.holdCampaigns(running) && !running) deliveryLoop.wake();
  };
  // Woken by NOTIFY postline_campaigns and by the idle probe while a campaign is sending or due.
  const campaignLoop = startLoop('campaigns', SAFETY_POLL_MS, () => runCampaignStep({ ...campaignDeps(deps), onFanOut }), onError);
  notifications.on('postline_campaigns', () => campaignLoop.wake());
  const webhooks = startWebhookDispatcher(deps, onError);
  const tlsReports = deps.config.tlsReports.send ? tlsReportDeps(deps) : null;
  // New events wake the dispatcher only while some hook is active: with none, the wake-up
  // after every batch of delivery outcomes was a query finding nothing (./presence.ts).
  wakeOnEventsWhilePresent(notifications, {
    present: () => anyActiveHook(deps.pool),
    changedChannel: 'postline_hooks',
    wake: () => webhooks.wake(),
    onError: (err) => onError('webhooks', err),
  });
  // Campaigns, double opt-in mails and the automation engine and queued triggers run when the
  // idle probe (one statement a second) finds them work; their own timers are only a safety net.
  const confirmations = startLoop('confirmation-mails', SAFETY_POLL_MS, () => runConfirmationMails(deps, links), onError);
  const automations = startAutomationLoops(deps, notifications, onError, SAFETY_POLL_MS);
  const loops: Loop[] = [
    startLoop('maintenance', 60_000, () => runMaintenance(deps.pool, deps.clock), onError),
    startLoop('subscriber-imports', 1_000, () => runPendingImports(deps.pool), onError),
    deliveryLoop,
    campaignLoop,
    webhooks,
    confirmations,
    automations.runs,
    automations.events,
    automations.pending,
    startIdleProbe(deps, { automationRuns: automations.runs, pendingTriggers: automations.pending, confirmations, campaigns: campaignLoop }, IDLE_PROBE_MS, onError),
    // TLS reports of the finished UTC day to the domains that ask for them (POSTLINE_TLSRPT_SEND=true).
    ...(tlsReports ? [startLoop('tls-reports', 10 * 60_000, () => sendDueTlsReports(tlsReports), onError)] : []),
  ];
  await notifications.start();
  return {
    async stop() {
      await notifications.stop();
      pacing.stop();
      await Promise.all(loops.map((l) => l.stop()));
      await delivery.close();
      await tlsReports?.mail.mailer.close();
    },
  };
}

/** What the campaign runner needs: the pool, the clock, and each account's monthly quota. */
export function campaignDeps(deps: WorkerDeps) {
  return {
    pool: deps.pool,
    now: () => deps.clock.now(),
    quotaOf: async (accountId: string) => (await requireAccount(deps.pool, accountId)).monthlyQuota,
  };
}

/** Double opt-in: queue pending confirmation mails as messages, then wake delivery. */
export async function runConfirmationMails(deps: WorkerDeps, links: TrackingLinks): Promise<number> {
  const queued = await withTransaction(deps.pool, (tx) => sendConfirmationMails(tx, { config: deps.config, links, now: deps.clock.now() }));
  if (queued > 0) {
    notifySoon(deps.pool, 'postline_messages');
    notifySoon(deps.pool, 'postline_events');
  }
  return queued;
}
