import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool } = await bootApp({ clock });
const acme = await createTestAccount(pool, 'Acme');
const other = await createTestAccount(pool, 'Other');
const receiver = await startWebhookReceiver();
after(() => receiver.close());

const json = { 'content-type': 'application/json' };

async function createHook(headers: Record<string, string>, body: unknown) {
  return app.inject({ method: 'POST', url: '/api/v1/hooks', headers: { ...headers, ...json }, payload: body as object });
}

test('create: 201 with id, url, normalised events, a whsec_ secret and createdAt', async () => {
  const res = await createHook(acme.live, { url: receiver.url, events: ['open', 'click', 'bounce', 'complaint', 'unsub'] });
  assert.equal(res.statusCode, 201);
  const hook = res.json();
  assert.match(hook.id, /^hook_[0-9a-f]{32}$/);
  assert.equal(hook.url, receiver.url);
  assert.deepEqual(hook.events, ['open', 'click', 'hard_bounce', 'soft_bounce', 'spam', 'unsubscribe']);
  assert.match(hook.secret, /^whsec_[A-Za-z0-9_-]{43,}$/);
  assert.equal(hook.createdAt, '2026-11-20T10:00:00.000Z');
  assert.deepEqual(Object.keys(hook).sort(), ['createdAt', 'events', 'id', 'secret', 'url']);
});

test('create: types and short names are deduplicated and stored as types in canonical order', async () => {
  const res = await createHook(acme.live, { url: receiver.url, events: ['hard_bounce', 'bounce', 'spam', 'complaint', 'delivered', 'sent', 'delivered'] });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(res.json().events, ['sent', 'delivered', 'hard_bounce', 'soft_bounce', 'spam']);
});

test('create: an unknown event name is 422 naming it', async () => {
  const res = await createHook(acme.live, { url: receiver.url, events: ['open', 'bounced', 'opened'] });
  assert.equal(res.statusCode, 422);
  const body = res.json();
  assert.equal(body.code, 'validation_failed');
  assert.equal(body.errors[0].field, 'events');
  assert.match(body.errors[0].message, /"bounced", "opened"/);
});

test('create: no events is 422', async () => {
  const res = await createHook(acme.live, { url: receiver.url, events: [] });
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().errors[0].field, 'events');
});

test('create: url must be http(s), without credentials, at most 2048 characters', async () => {
  for (const url of ['ftp://example.com/hook', 'not a url', 'https://user:pass@example.com/hook', `https://example.com/${'a'.repeat(2040)}`, 'javascript:alert(1)']) {
    const res = await createHook(acme.live, { url, events: ['open'] });
    assert.equal(res.statusCode, 422, url);
    assert.equal(res.json().errors[0].field, 'url', url);
  }
});

test('create: missing url or events is 422 validation_failed', async () => {
  const res = await createHook(acme.live, { events: ['open'] });
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().errors[0].field, 'url');
});

test('get: the hook with status and no secret', async () => {
  const created = (await createHook(acme.live, { url: receiver.url, events: ['click'] })).json();
  const res = await app.inject({ url: `/api/v1/hooks/${created.id}`, headers: acme.live });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { id: created.id, url: receiver.url, events: ['click'], status: 'active', disabledReason: null, createdAt: created.createdAt });
});

test('the secret is encrypted at rest', async () => {
  const created = (await createHook(acme.live, { url: receiver.url, events: ['click'] })).json();
  const { rows } = await pool.query('SELECT secret FROM hooks WHERE id = $1', [created.id]);
  assert.ok(!rows[0].secret.includes(created.secret.slice(6)));
  assert.match(rows[0].secret, /^v1\./);
});

test('list: paginated, newest first, without secrets', async () => {
  const a = await createTestAccount(pool, 'Lister');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await createHook(a.live, { url: receiver.url, events: ['open'] })).json().id);
  const page1 = (await app.inject({ url: '/api/v1/hooks?limit=2', headers: a.live })).json();
  assert.deepEqual(page1.data.map((h: { id: string }) => h.id), [ids[2], ids[1]]);
  assert.ok(page1.nextCursor);
  assert.ok(page1.data.every((h: Record<string, unknown>) => !('secret' in h)));
  const page2 = (await app.inject({ url: `/api/v1/hooks?limit=2&cursor=${page1.nextCursor}`, headers: a.live })).json();
  assert.deepEqual(page2.data.map((h: { id: string }) => h.id), [ids[0]]);
  assert.equal(page2.nextCursor, null);
});

test('delete: 204, then 404', async () => {
  const created = (await createHook(acme.live, { url: receiver.url, events: ['open'] })).json();
  const del = await app.inject({ method: 'DELETE', url: `/api/v1/hooks/${created.id}`, headers: acme.live });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.equal((await app.inject({ url: `/api/v1/hooks/${created.id}`, headers: acme.live })).statusCode, 404);
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v1/hooks/${created.id}`, headers: acme.live })).statusCode, 404);
});

test('rotate-secret: a new whsec_ secret that signs the next delivery', async () => {
  const created = (await createHook(acme.live, { url: receiver.url, events: ['open'] })).json();
  const res = await app.inject({ method: 'POST', url: `/api/v1/hooks/${created.id}/rotate-secret`, headers: acme.live });
  assert.equal(res.statusCode, 200);
  const { secret } = res.json();
  assert.match(secret, /^whsec_/);
  assert.notEqual(secret, created.secret);
  const before = receiver.requests.length;
  await app.inject({ method: 'POST', url: `/api/v1/hooks/${created.id}/test`, headers: acme.live });
  const req = receiver.requests[before];
  assert.equal(req.headers['x-svc-signature'], `sha256=${createHmac('sha256', secret).update(req.rawBody).digest('hex')}`);
});

test('test: sends one signed event now and returns the attempt result', async () => {
  const created = (await createHook(acme.live, { url: receiver.url, events: ['click', 'open'] })).json();
  const before = receiver.requests.length;
  const res = await app.inject({ method: 'POST', url: `/api/v1/hooks/${created.id}/test`, headers: acme.live });
  assert.equal(res.statusCode, 200);
  const result = res.json();
  assert.equal(result.delivered, true);
  assert.equal(result.statusCode, 200);
  assert.equal(result.error, null);
  assert.equal(receiver.requests.length, before + 1);
  const req = receiver.requests[before];
  assert.equal(req.headers['x-svc-signature'], `sha256=${createHmac('sha256', created.secret).update(req.rawBody).digest('hex')}`);
  assert.equal(req.headers['user-agent'], 'Postline-Webhooks/1');
  const body = req.json();
  assert.equal(body.hookId, created.id);
  assert.equal(body.events.length, 1);
  assert.equal(body.events[0].type, 'open');
  assert.deepEqual(body.events[0].data, { test: true });
  assert.deepEqual(body.events[0], result.event);

  const log = (await app.inject({ url: `/api/v1/hooks/${created.id}/deliveries`, headers: acme.live })).json();
  assert.equal(log.data.length, 1);
  assert.equal(log.data[0].outcome, 'test');
  assert.equal(log.data[0].statusCode, 200);
  assert.equal(log.data[0].eventCount, 1);
});

test('test: a failing receiver is reported, not thrown', async () => {
  const created = (await createHook(acme.live, { url: receiver.url, events: ['open'] })).json();
  receiver.enqueue({ status: 500, body: 'kaputt' });
  const result = (await app.inject({ method: 'POST', url: `/api/v1/hooks/${created.id}/test`, headers: acme.live })).json();
  assert.equal(result.delivered, false);
  assert.equal(result.statusCode, 500);
  assert.match(result.error, /HTTP 500: kaputt/);
  assert.equal((await app.inject({ url: `/api/v1/hooks/${created.id}`, headers: acme.live })).json().status, 'active');
});

test('account isolation: another account\'s hook is 404 on every route and absent from its list', async () => {
  const hook = (await createHook(acme.live, { url: receiver.url, events: ['open'] })).json();
  const routes: Array<{ method: 'GET' | 'POST' | 'DELETE'; url: string }> = [
    { method: 'GET', url: `/api/v1/hooks/${hook.id}` },
    { method: 'GET', url: `/api/v1/hooks/${hook.id}/deliveries` },
    { method: 'POST', url: `/api/v1/hooks/${hook.id}/rotate-secret` },
    { method: 'POST', url: `/api/v1/hooks/${hook.id}/test` },
    { method: 'DELETE', url: `/api/v1/hooks/${hook.id}` },
  ];
  const before = receiver.requests.length;
  for (const r of routes) {
    const res = await app.inject({ ...r, headers: other.live });
    assert.equal(res.statusCode, 404, `${r.method} ${r.url}`);
    assert.equal(res.json().code, 'not_found');
  }
  assert.equal(receiver.requests.length, before, 'no test event was sent for another account');
  const list = (await app.inject({ url: '/api/v1/hooks', headers: other.live })).json();
  assert.ok(!list.data.some((h: { id: string }) => h.id === hook.id));
  assert.equal((await app.inject({ url: `/api/v1/hooks/${hook.id}`, headers: acme.live })).statusCode, 200, 'still there for its owner');
});

test('auth: every hooks route needs a key', async () => {
  assert.equal((await app.inject({ url: '/api/v1/hooks' })).statusCode, 401);
  assert.equal((await app.inject({ method: 'POST', url: '/api/v1/hooks', headers: json, payload: { url: receiver.url, events: ['open'] } })).statusCode, 401);
});

test('openapi: every hooks route is documented with examples', async () => {
  const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json();
  const ops = [
    ['/api/v1/hooks', 'post', '201'],
    ['/api/v1/hooks', 'get', '200'],
    ['/api/v1/hooks/{id}', 'get', '200'],
    ['/api/v1/hooks/{id}', 'delete', '204'],
    ['/api/v1/hooks/{id}/deliveries', 'get', '200'],
    ['/api/v1/hooks/{id}/rotate-secret', 'post', '200'],
    ['/api/v1/hooks/{id}/test', 'post', '200'],
  ];
  for (const [path, method, status] of ops) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method} ${path} documented`);
    assert.ok(op.responses[status], `${method} ${path} ${status}`);
    assert.deepEqual(op.security, [{ bearer: [] }, { apiKey: [] }, { session: [] }]);
    if (status !== '204') assert.ok(JSON.stringify(op.responses[status]).includes('example'), `${method} ${path} has an example`);
  }
  assert.ok(JSON.stringify(doc.paths['/api/v1/hooks'].post.requestBody).includes('example'));
});
