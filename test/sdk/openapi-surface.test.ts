import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { NOT_COVERED, OPERATIONS, Postline } from '../../packages/sdk/src/index.js';
import { generateOperations, generateTypes, sdkDocument } from '../../packages/sdk/scripts/codegen.js';
import { bootApp } from '../helpers/app.js';

/**
 * The SDK against the OpenAPI document the server serves: its checked-in snapshot, types and
 * operation table must be current (else: `npm run sdk:generate`), and every operation must
 * have a resource method unless NOT_COVERED says why not. A new endpoint fails here until
 * the SDK covers it.
 */
const { app } = await bootApp();
const served = sdkDocument((await app.inject({ url: '/api/v1/openapi.json' })).json());
const sdkFile = (path: string) => readFileSync(new URL(`../../packages/sdk/${path}`, import.meta.url), 'utf8');
const STALE = 'stale: run `npm run sdk:generate` and commit packages/sdk';

const documented = new Map<string, string>();
for (const [path, item] of Object.entries(served.paths as Record<string, Record<string, { operationId: string }>>)) {
  for (const [method, op] of Object.entries(item)) documented.set(op.operationId, `${method.toUpperCase()} ${path}`);
}

test('sdk surface: the checked-in OpenAPI snapshot is the document the server serves', () => {
  assert.deepEqual(JSON.parse(sdkFile('openapi.json')), served, STALE);
});

test('sdk surface: the generated types and operation table are what the generator makes of it', async () => {
  assert.equal(sdkFile('src/generated/openapi.ts'), await generateTypes(served), STALE);
  assert.equal(sdkFile('src/generated/operations.ts'), generateOperations(served), STALE);
  assert.deepEqual(new Map(Object.entries(OPERATIONS).map(([id, [m, p]]) => [id, `${m} ${p}`])), documented, STALE);
});

test('sdk surface: every operation has an SDK method, or NOT_COVERED says why not', () => {
  const covered = new Postline({ apiKey: 'sk_test_unused', baseUrl: 'http://127.0.0.1:1' }).coveredOperations();
  const missing = [...documented.keys()].filter((id) => !covered.has(id as never) && !(id in NOT_COVERED));
  assert.deepEqual(missing, [], `operations without an SDK method: ${missing.map((id) => `${id} (${documented.get(id)})`).join(', ')}`);
});

test('sdk surface: NOT_COVERED and the covered set name only operations that exist, and never the same one', () => {
  const covered = new Postline({ apiKey: 'sk_test_unused', baseUrl: 'http://127.0.0.1:1' }).coveredOperations();
  for (const id of [...covered, ...Object.keys(NOT_COVERED)]) assert.ok(documented.has(id), `${id} is not in the document`);
  for (const id of Object.keys(NOT_COVERED)) assert.ok(!covered.has(id as never), `${id} is both covered and NOT_COVERED`);
});
