import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { AuthContext } from '../domain/keys/api-keys.js';
import type { VerifiedKeyCache } from '../domain/keys/key-cache.js';
import type { RequestWrites } from '../domain/request-writes.js';

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
    /** This process's verified API keys (domain/keys/key-cache.ts); a revocation here forgets the key. */
    keyCache: VerifiedKeyCache;
    /** This process's group commit of the rate counts and accepted sends (domain/request-writes.ts). */
    requestWrites: RequestWrites;
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
