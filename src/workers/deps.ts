import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';

/** What every worker loop is given (workers/index.ts starts them). */
export interface WorkerDeps {
  config: Config;
  pool: Pool;
  clock: Clock;
  log: Logger;
}
