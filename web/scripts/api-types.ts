/**
 * Generates web/src/api-types.ts, the dashboard's types of the API, from the OpenAPI document
 * the server serves (built here without a database: the document comes from the route
 * schemas alone), with openapi-typescript. `--check` writes nothing and fails when the file
 * is not what the routes generate now: `npm run lint` runs it, so the dashboard cannot drift
 * from the API. `npm run build:web` regenerates it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import pg from 'pg';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/app.js';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'api-types.ts');
const HEADER = '/* Generated from the OpenAPI document by web/scripts/api-types.ts (npm run gen:api-types). Do not edit. */\n\n';

async function openApiDocument(): Promise<unknown> {
  const dataDir = mkdtempSync(join(tmpdir(), 'postline-openapi-'));
  // Fixed values, so the document (its server URL) is the same on every machine. The pool
  // never connects: nothing here queries.
  const config = loadConfig({ POSTLINE_DATA_DIR: dataDir, POSTLINE_BASE_URL: 'http://localhost:3000', POSTLINE_SECRET: 'x'.repeat(64), POSTLINE_FBL_SECRET: 'x'.repeat(64) });
  const pool = new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none', max: 1 });
  const app = await buildApp({ config, pool, clock: systemClock }, { logger: false });
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
    await pool.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const generated = HEADER + astToString(await openapiTS(JSON.parse(JSON.stringify(await openApiDocument())))).trimEnd() + '\n';
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(OUT, 'utf8');
  } catch {
    // missing: not current
  }
  if (current !== generated) {
    process.stderr.write('web/src/api-types.ts is not what the API generates now: run `npm run gen:api-types` and commit it.\n');
    process.exit(1);
  }
} else {
  writeFileSync(OUT, generated);
}
