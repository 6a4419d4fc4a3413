/**
 * The API's OpenAPI document, read off the app the server builds, for the SDK's generator
 * (packages/sdk/scripts/generate.ts; the dashboard uses the SDK's types).
 * The document comes from the route schemas alone, so no database is needed: the pool is never
 * asked anything. Fixed configuration values keep it the same on every machine (its server URL).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';

export async function openApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'postline-openapi-'));
  const config = loadConfig({
    POSTLINE_DATA_DIR: dataDir,
    POSTLINE_BASE_URL: 'http://localhost:3000',
    POSTLINE_SECRET: 'x'.repeat(64),
    POSTLINE_FBL_SECRET: 'x'.repeat(64),
    LOG_LEVEL: 'silent',
  });
  const pool = new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none', max: 1 });
  const app = await buildApp({ config, pool, clock: systemClock }, { logger: false });
  try {
    await app.ready();
    // A plain JSON copy: what the server serves, without the schema objects' prototypes.
    return JSON.parse(JSON.stringify(app.swagger())) as Record<string, unknown>;
  } finally {
    await app.close();
    await pool.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
