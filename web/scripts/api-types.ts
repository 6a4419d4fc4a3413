/**
 * Generates web/src/api-types.ts, the dashboard's types of the API, from the OpenAPI document
 * the server serves (scripts/openapi-document.ts), with openapi-typescript. `--check` writes nothing and fails when the file
 * is not what the routes generate now: `npm run lint` runs it, so the dashboard cannot drift
 * from the API. `npm run build:web` regenerates it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { openApiDocument } from '../../scripts/openapi-document.js';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'api-types.ts');
const HEADER = '/* Generated from the OpenAPI document by web/scripts/api-types.ts (npm run gen:api-types). Do not edit. */\n\n';

const generated = HEADER + astToString(await openapiTS((await openApiDocument()) as unknown as OpenAPI3)).trimEnd() + '\n';
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
