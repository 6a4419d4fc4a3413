import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { AuthContext } from '../domain/apiKeys.js';

/** What route handlers may use. Passed in, so tests boot the production app on their own database and clock. */
export interface AppDeps {
  config: Config;
  pool: Pool;
  clock: Clock;
  /** For the per-request rate-limit counter, whose commits need no WAL flush; defaults to pool. */
  relaxedPool?: Pool;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
  }
  interface FastifyRequest {
    /** Set on every authenticated /api/v1 request. */
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    /** Route needs no API key (tracking, FBL, docs). */
    public?: boolean;
  }
}
