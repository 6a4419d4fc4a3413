/**
 * `npm run sdk:generate`: takes the API's OpenAPI document (scripts/openapi-document.ts) and
 * writes the SDK's snapshot of it (packages/sdk/openapi.json), the types generated from it
 * (packages/sdk/src/generated/openapi.ts) and its operation table
 * (packages/sdk/src/generated/operations.ts). Both are checked in, so the SDK
 * builds without a server; test/sdk/openapi-surface.test.ts fails when they fall behind.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../../../scripts/openapi-document.js';
import { generateOperations, generateTypes, sdkDocument } from './codegen.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const doc = sdkDocument(await openApiDocument());
writeFileSync(join(root, 'openapi.json'), JSON.stringify(doc, null, 2) + '\n');
writeFileSync(join(root, 'src/generated/openapi.ts'), await generateTypes(doc));
writeFileSync(join(root, 'src/generated/operations.ts'), generateOperations(doc));
process.stdout.write(`wrote packages/sdk/openapi.json and packages/sdk/src/generated/{openapi,operations}.ts (${Object.keys(doc.paths as object).length} paths)\n`);
