import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import { startLoop, type Loop } from './loop.js';
import { runMaintenance } from './maintenance.js';

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
  const loops: Loop[] = [
    startLoop('maintenance', 60_000, () => runMaintenance(deps.pool, deps.clock), onError),
  ];
  return {
    async stop() {
      await Promise.all(loops.map((l) => l.stop()));
    },
  };
}
