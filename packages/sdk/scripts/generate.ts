/**
 * `npm run sdk:generate`: builds the Postline app (no database is touched), takes its OpenAPI
 * document and writes the SDK's snapshot of it (packages/sdk/openapi.json), the types
 * generated from it (packages/sdk/src/generated/openapi.ts) and its operation table
 * (packages/sdk/src/generated/operations.ts). Both are checked in, so the SDK
 * builds without a server; test/sdk/openapi-currency.test.ts fails when they fall behind.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { systemClock } from '../../../src/clock.js';
import { loadConfig } from '../../../src/config.js';
import { buildApp } from '../../../src/http/app.js';
import { generateOperations, generateTypes, sdkDocument } from './codegen.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const config = loadConfig({ POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-sdk-')), POSTLINE_SECRET: 'sdk-generate-0123456789', LOG_LEVEL: 'silent' });
// A pool that is never asked anything: building the app and serving its document need no database.
const pool = new pg.Pool({ connectionString: 'postgres://postline@127.0.0.1:1/none' });
const app = await buildApp({ config, pool, clock: systemClock }, { logger: false });
await app.ready();
const doc = sdkDocument((await app.inject({ url: '/api/v1/openapi.json' })).json());
await app.close();
await pool.end();
writeFileSync(join(root, 'openapi.json'), JSON.stringify(doc, null, 2) + '\n');
writeFileSync(join(root, 'src/generated/openapi.ts'), await generateTypes(doc));
writeFileSync(join(root, 'src/generated/operations.ts'), generateOperations(doc));
process.stdout.write(`wrote packages/sdk/openapi.json and packages/sdk/src/generated/{openapi,operations}.ts (${Object.keys(doc.paths as object).length} paths)\n`);
