import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import { startLoop, type Loop } from './loop.js';
import { runMaintenance } from './maintenance.js';
import { DeliveryEngine } from './delivery.js';
import { Notifications } from './notifications.js';
import { startWebhookDispatcher } from './webhooks.js';

export interface WorkerDeps {
  config: Config;
  pool: Pool;
  clock: Clock;
  log: Logger;
}

export interface Workers {
  stop(): Promise<void>;
}

/** The worker role: every background loop. Each feature adds its loop here. */
export async function startWorkers(deps: WorkerDeps): Promise<Workers> {
  const onError = (name: string, err: unknown) => deps.log.error({ err, loop: name }, 'background loop failed; retrying');
  const notifications = new Notifications(deps.pool);
  const delivery = new DeliveryEngine(deps);
  const deliveryLoop: Loop = startLoop('delivery', 1000, async () => {
    // A full batch means more is waiting: go again at once instead of sleeping.
    if ((await delivery.runOnce()) > 0) deliveryLoop.wake();
  }, onError);
  notifications.on('postline_messages', () => deliveryLoop.wake());
  const loops: Loop[] = [
    startLoop('maintenance', 60_000, () => runMaintenance(deps.pool, deps.clock), onError),
    deliveryLoop,
    startWebhookDispatcher(deps, onError),
  ];
  await notifications.start();
  return {
    async stop() {
      await notifications.stop();
      await Promise.all(loops.map((l) => l.stop()));
      await delivery.close();
    },
  };
}
