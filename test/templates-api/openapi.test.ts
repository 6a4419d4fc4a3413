import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp } from '../helpers/app.js';

const { app } = await bootApp();
const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json();

type Media = { example?: unknown; examples?: unknown; schema?: { examples?: unknown } };
type Op = { summary?: string; description?: string; tags?: string[]; security?: unknown[]; responses: Record<string, { content?: Record<string, Media> }> };

function hasExample(op: Op, status: string): boolean {
  const content = op.responses[status]?.content ?? {};
  // A media-type example, or (OpenAPI 3.1) JSON Schema `examples` on the schema itself.
  return Object.values(content).some((m) => m.example !== undefined || m.examples !== undefined || m.schema?.examples !== undefined);
}

const ENDPOINTS: [string, string, string[]][] = [
  ['get', '/api/v1/templates', ['200']],
  ['post', '/api/v1/templates', ['201', '422']],
  ['get', '/api/v1/templates/folders', ['200']],
  ['get', '/api/v1/templates/{id}', ['200', '404']],
  ['patch', '/api/v1/templates/{id}', ['200', '404', '422']],
  ['delete', '/api/v1/templates/{id}', ['200', '404']],
  ['post', '/api/v1/templates/{id}/render', ['200', '404', '422']],
  ['get', '/api/v1/suppression', ['200']],
  ['post', '/api/v1/suppression', ['200', '201', '422']],
  ['delete', '/api/v1/suppression', ['200', '404']],
];

for (const [method, path, statuses] of ENDPOINTS) {
  test(`openapi: ${method.toUpperCase()} ${path} is documented with summary, tags, security and examples`, () => {
    const op = doc.paths?.[path]?.[method] as Op | undefined;
    assert.ok(op, `${method} ${path} missing`);
    assert.ok(op.summary && op.description, 'summary and description');
    assert.ok(op.tags?.length, 'tags');
    assert.ok(op.security?.length, 'security');
    for (const status of statuses) assert.ok(hasExample(op, status), `${status} has an example`);
  });
}

test('openapi: template and suppression errors are documented as application/problem+json', () => {
  assert.ok(doc.paths['/api/v1/templates/{id}'].get.responses['404'].content['application/problem+json']);
  assert.ok(doc.paths['/api/v1/suppression'].delete.responses['404'].content['application/problem+json']);
});

test('openapi: request bodies carry examples', () => {
  for (const [method, path] of [['post', '/api/v1/templates'], ['patch', '/api/v1/templates/{id}'], ['post', '/api/v1/templates/{id}/render'], ['post', '/api/v1/suppression']]) {
    const media = doc.paths[path][method].requestBody.content['application/json'];
    assert.ok(media.example !== undefined || media.examples !== undefined || media.schema.examples !== undefined, `${method} ${path}`);
  }
});
