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
  env: { POSTLINE_IDEMPOTENCY_LEASE_SECONDS: '1' },
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

test('idempotency: a claim whose owner died is taken over once its lease runs out, and the request runs once', async () => {
  const first = await post(acme.live, 'k-dead', 'x');
  // What a process killed mid-request leaves: no answer, a lease nobody renews.
  await pool.query(
    `UPDATE idempotency_keys SET status_code = NULL, response_body = NULL, lease_token = 'gone', locked_until = $2 WHERE key = $1`,
    ['k-dead', new Date(clock.now().getTime() + 1000)],
  );
  const blocked = await post(acme.live, 'k-dead', 'x');
  assert.equal(blocked.statusCode, 409);
  assert.equal(blocked.headers['retry-after'], '1');
  assert.equal((await post(acme.live, 'k-dead', 'other')).json().detail, 'Idempotency-Key was already used with a different request body');
  clock.advance(1000);
  const before = calls;
  const [a, b] = await Promise.all([post(acme.live, 'k-dead', 'x'), post(acme.live, 'k-dead', 'x')]);
  assert.equal(calls - before, 1); // of two retries racing for the expired lease, one runs
  const ran = [a, b].filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
  assert.equal(ran.length, 1);
  const other = ran[0] === a ? b : a; // still in progress, or already replayed
  assert.ok(other.statusCode === 409 || (other.statusCode === 201 && other.body === ran[0].body), other.body);
  assert.notEqual(ran[0].json().n, first.json().n);
  assert.equal((await post(acme.live, 'k-dead', 'x')).headers['idempotent-replayed'], 'true');
});

test('idempotency: a record left by a process of the previous version (no lease) is taken over', async () => {
  await post(acme.live, 'k-old', 'x');
  await pool.query(`UPDATE idempotency_keys SET status_code = NULL, response_body = NULL, lease_token = NULL, request_ref = NULL, locked_until = NULL WHERE key = 'k-old'`);
  const res = await post(acme.live, 'k-old', 'x');
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers['idempotent-replayed'], undefined);
});

test('idempotency: a request running longer than its lease renews it and keeps the key', async () => {
  let entered!: () => void;
  let release!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  hold = { entered, release: new Promise<void>((r) => (release = r)) };
  const first = post(acme.live, 'k-long', 'x');
  await inHandler;
  clock.advance(5000); // far past the 1 s lease on the app's clock
  const leaseEnd = async () => (await pool.query(`SELECT locked_until FROM idempotency_keys WHERE key = 'k-long'`)).rows[0].locked_until as Date;
  const deadline = Date.now() + 10_000;
  while ((await leaseEnd()).getTime() <= clock.now().getTime() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok((await leaseEnd()).getTime() > clock.now().getTime(), 'the heartbeat renewed the lease');
  const second = await post(acme.live, 'k-long', 'x');
  hold = null;
  release();
  assert.equal(second.statusCode, 409);
  assert.equal((await first).statusCode, 201);
  assert.equal((await leaseEnd()), null);
});
