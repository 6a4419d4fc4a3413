import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp } from '../helpers/app.js';

const { app } = await bootApp();
const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json();

type Media = { example?: unknown; examples?: unknown; schema?: { examples?: unknown } };
type Op = { summary?: string; description?: string; tags?: string[]; security?: unknown[]; requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };

const hasExample = (media: Record<string, Media> = {}) =>
  Object.values(media).some((m) => m.example !== undefined || m.examples !== undefined || m.schema?.examples !== undefined);

const ENDPOINTS: [string, string, string[]][] = [
  ['get', '/api/v1/lists', ['200']],
  ['post', '/api/v1/lists', ['201', '422']],
  ['get', '/api/v1/lists/{id}', ['200', '404']],
  ['patch', '/api/v1/lists/{id}', ['200', '404', '422']],
  ['delete', '/api/v1/lists/{id}', ['404']],
  ['get', '/api/v1/subscribers', ['200']],
  ['post', '/api/v1/subscribers', ['200', '201', '422']],
  ['get', '/api/v1/subscribers/{idOrEmail}', ['200', '404']],
  ['patch', '/api/v1/subscribers/{idOrEmail}', ['200', '404', '409', '422']],
  ['delete', '/api/v1/subscribers/{idOrEmail}', ['404']],
  ['post', '/api/v1/subscribers/import', ['202', '422']],
  ['get', '/api/v1/imports', ['200']],
  ['get', '/api/v1/imports/{id}', ['200', '404']],
  ['get', '/api/v1/segments', ['200']],
  ['post', '/api/v1/segments', ['201', '422']],
  ['get', '/api/v1/segments/{id}', ['200', '404']],
  ['patch', '/api/v1/segments/{id}', ['200', '404', '422']],
  ['delete', '/api/v1/segments/{id}', ['404']],
  ['get', '/api/v1/segments/{id}/subscribers', ['200', '404']],
];

for (const [method, path, statuses] of ENDPOINTS) {
  test(`openapi: ${method.toUpperCase()} ${path} is documented with summary, description, tags, security and examples`, () => {
    const op = doc.paths?.[path]?.[method] as Op | undefined;
    assert.ok(op, `${method} ${path} missing`);
    assert.ok(op.summary && op.description, 'summary and description');
    assert.ok(op.tags?.length, 'tags');
    assert.ok(op.security?.length, 'security');
    for (const status of statuses) assert.ok(hasExample(op.responses[status]?.content), `${status} has an example`);
    if (op.requestBody) assert.ok(hasExample(op.requestBody.content), 'request body has an example');
  });
}

test('openapi: the import takes JSON or text/csv bodies', () => {
  const content = doc.paths['/api/v1/subscribers/import'].post.requestBody.content;
  assert.ok(content['application/json']);
  assert.ok(content['text/csv']);
});

test('openapi: the confirmation link is documented and needs no key', () => {
  const op = Object.entries(doc.paths as Record<string, Record<string, Op>>).find(([p]) => p.startsWith('/confirm/'))?.[1].get;
  assert.ok(op?.summary);
  assert.deepEqual(op?.security, [], 'public: explicitly no key');
});
