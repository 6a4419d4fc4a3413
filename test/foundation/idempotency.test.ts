import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';

let calls = 0;
// Holds a handler inside its run until the test releases it: makes "concurrent" certain.
let hold: { entered: () => void; release: Promise<void> } | null = null;
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool } = await bootApp({
  clock,
  setup(app) {
    // A test-only POST whose handler counts its runs and is slow enough to overlap.
    app.post('/api/v1/_things', { schema: { body: Type.Object({ name: Type.String() }) } }, async (request, reply) => {
      calls++;
      const { name } = request.body as { name: string };
      if (hold) {
        hold.entered();
        await hold.release;
      }
      if (name === 'explode') throw new Error('boom');
      return reply.code(201).send({ n: calls, name });
    });
  },
});
const acme = await createTestAccount(pool, 'Acme');
const other = await createTestAccount(pool, 'Other');

function post(headers: Record<string, string>, key: string | undefined, name: string) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/_things',
    headers: { ...headers, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    payload: { name },
  });
}

test('idempotency: same key and body replays the first response', async () => {
  const a = await post(acme.live, 'k-1', 'one');
  const b = await post(acme.live, 'k-1', 'one');
  assert.equal(a.statusCode, 201);
  assert.equal(b.statusCode, 201);
  assert.equal(b.body, a.body);
  assert.equal(b.headers['idempotent-replayed'], 'true');
  assert.equal(a.headers['idempotent-replayed'], undefined);
  assert.match(b.headers['content-type'] as string, /application\/json/);
});

test('idempotency: same key with another body is 409 idempotency_conflict', async () => {
  await post(acme.live, 'k-2', 'one');
  const res = await post(acme.live, 'k-2', 'two');
  assert.equal(res.statusCode, 409);
  assert.equal(res.json().code, 'idempotency_conflict');
});

test('idempotency: two concurrent requests with one key: one runs, the other gets 409', async () => {
  const before = calls;
  let entered!: () => void;
  let release!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  hold = { entered, release: new Promise<void>((r) => (release = r)) };
  const first = post(acme.live, 'k-3', 'x');
  await inHandler; // the first request holds the key and is still running
  const second = await post(acme.live, 'k-3', 'x');
  hold = null;
  release();
  assert.equal(second.statusCode, 409);
  assert.equal(second.json().code, 'idempotency_conflict');
  assert.equal((await first).statusCode, 201);
  assert.equal(calls - before, 1);
});

test('idempotency: keys are scoped per account', async () => {
  const a = await post(acme.live, 'shared-key', 'a');
  const b = await post(other.live, 'shared-key', 'b');
  assert.equal(a.statusCode, 201);
  assert.equal(b.statusCode, 201);
  assert.equal(b.json().name, 'b');
});

test('idempotency: after 24 hours the key can be used again', async () => {
  const a = await post(acme.live, 'k-4', 'first');
  clock.advance(24 * 60 * 60 * 1000 + 1);
  const b = await post(acme.live, 'k-4', 'second');
  assert.equal(b.statusCode, 201);
  assert.notEqual(b.json().n, a.json().n);
  assert.equal(b.headers['idempotent-replayed'], undefined);
});

test('idempotency: a 5xx first attempt releases the key for a retry', async () => {
  const a = await post(acme.live, 'k-5', 'explode');
  assert.equal(a.statusCode, 500);
  const b = await post(acme.live, 'k-5', 'explode');
  assert.equal(b.statusCode, 500);
  assert.equal(b.headers['idempotent-replayed'], undefined);
});

test('idempotency: a key longer than 255 characters is 422', async () => {
  const res = await post(acme.live, 'x'.repeat(256), 'long');
  assert.equal(res.statusCode, 422);
  assert.equal((await post(acme.live, 'y'.repeat(255), 'long')).statusCode, 201);
});

test('idempotency: without the header every POST runs', async () => {
  const before = calls;
  await post(acme.live, undefined, 'n');
  await post(acme.live, undefined, 'n');
  assert.equal(calls - before, 2);
});

test('idempotency: stored responses are encrypted at rest', async () => {
  await post(acme.live, 'k-secret', 'whsec_visible_once');
  const { rows } = await pool.query(`SELECT response_body FROM idempotency_keys WHERE key = 'k-secret'`);
  assert.ok(!rows[0].response_body.includes('whsec_visible_once'));
  const replay = await post(acme.live, 'k-secret', 'whsec_visible_once');
  assert.equal(replay.json().name, 'whsec_visible_once');
});
