import type { Config } from '../config.js';
import { startEmbedded } from './embedded.js';
import { migrate } from './migrate.js';
import { createPool, type Pool } from './pool.js';
import { assertSupportedServer } from './server-version.js';

export interface Database {
  pool: Pool;
  /** Connections whose commits skip the WAL flush: rate-limit counters only. */
  relaxedPool: Pool;
  url: string;
  /** Closes the pool and, for an embedded server this process owns, stops PostgreSQL. */
  close(): Promise<void>;
}

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL in the data dir. `owner` is true
 * for `postline start`: it starts the server (or adopts one a crashed process left running)
 * and stops it on shutdown. CLI commands reuse a running server and leave it running, or
 * start one just for the command.
 */
export async function openDatabase(
  config: Config,
  opts: { owner: boolean; migrate?: boolean; log?: (m: string) => void; poolSize?: number },
): Promise<Database> {
  const log = opts.log ?? (() => {});
  let url = config.databaseUrl;
  let stopServer = async () => {};
  if (!url) {
    const server = await startEmbedded(config.dataDir, { log, adoptRunning: opts.owner });
    url = server.url;
    stopServer = server.stop;
  }
  const pool = createPool(url, opts.poolSize ?? 20);
  const relaxedPool = createPool(url, 10, { relaxed: true });
  try {
    await assertSupportedServer(pool);
    if (opts.migrate !== false) await migrate(pool, log);
  } catch (err) {
    await Promise.all([pool.end(), relaxedPool.end()]);
    await stopServer();
    throw err;
  }
  return {
    pool,
    relaxedPool,
    url,
    async close() {
      await Promise.all([pool.end(), relaxedPool.end()]);
      await stopServer();
    },
  };
}
