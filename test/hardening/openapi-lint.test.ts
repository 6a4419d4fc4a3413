import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { bootApp } from '../helpers/app.js';

/**
 * The served OpenAPI document stays clean under Redocly's `recommended`
 * ruleset (errors AND warnings): security on every operation, path parameters that exist, a
 * camelCase operationId on every operation (SDK generators name their methods by it), a 2xx
 * response everywhere. Routes added later are linted too: fix what this test names.
 */
const { app } = await bootApp({ env: { POSTLINE_BASE_URL: 'https://mail.acme.test' } });
const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json();

test('openapi: Redocly recommended lint finds nothing', async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
  const report = problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);
  assert.deepEqual(report, [], `the OpenAPI document must be lint-clean (Redocly "recommended"); fix these in the route schemas:\n${report.join('\n')}`);
});

test('openapi: every operation has a unique camelCase operationId, a tag and security', () => {
  const seen = new Map<string, string>();
  const bad: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { operationId?: string; tags?: string[]; security?: unknown[] }>>)) {
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!op.operationId || !/^[a-z][a-zA-Z0-9]+$/.test(op.operationId)) bad.push(`${where}: operationId ${op.operationId ?? '(none)'} is not camelCase — add schema.operationId, e.g. 'listCampaigns'`);
      else if (seen.has(op.operationId)) bad.push(`${where}: operationId ${op.operationId} is also used by ${seen.get(op.operationId)}`);
      else seen.set(op.operationId, where);
      if (!op.tags?.length) bad.push(`${where}: no tag`);
      if (!Array.isArray(op.security)) bad.push(`${where}: no security (API routes get it automatically; a public route gets [])`);
    }
  }
  assert.deepEqual(bad, []);
  assert.ok(seen.size >= 50, `${seen.size} operations`);
});

test('openapi: the operationIds of existing operations are stable (SDK method names)', () => {
  const ids = new Map<string, string>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { operationId?: string }>>)) {
    for (const [method, op] of Object.entries(item)) ids.set(`${method.toUpperCase()} ${path}`, op.operationId ?? '');
  }
  const stable: Record<string, string> = {
    'POST /api/v1/emails': 'sendEmail', 'POST /api/v1/emails/batch': 'sendEmailBatch', 'GET /api/v1/emails/{id}': 'getEmail',
    'GET /api/v1/domains': 'listDomains', 'POST /api/v1/domains/{id}/verify': 'verifyDomain', 'POST /api/v1/hooks/{id}/enable': 'enableHook',
    'POST /api/v1/hooks/{id}/rotate-secret': 'rotateHookSecret', 'GET /api/v1/subscribers/{idOrEmail}': 'getSubscriber',
    'POST /api/v1/subscribers/import': 'importSubscribers', 'GET /confirm/{token}': 'confirmSubscription', 'POST /api/fbl/inbound': 'reportComplaint',
  };
  for (const [op, id] of Object.entries(stable)) assert.equal(ids.get(op), id, op);
});
