import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ManualClock } from '../../src/clock.js';
import { Postline, PostlineError } from '../../packages/sdk/src/index.js';
import { startSdkServer } from './server.js';

/**
 * Retries against a real Postline. The failures a client meets between it and the server (a
 * proxy's 502 after the server accepted, an answer slower than the timeout) are made by one
 * onSend hook that runs after the app's own (the idempotency record is already written),
 * acting on requests whose subject asks for it.
 */
const seen: { subject: string; key: string | undefined }[] = [];
// Each test starts in a minute of its own: the rate limit is two requests a minute.
const clock = new ManualClock('2026-11-30T10:00:59.000Z');
const server = await startSdkServer({
  clock,
  env: { POSTLINE_RATE_LIMIT_LIVE: '2' },
  setup: (app) => {
    app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
      if (request.url !== '/api/v1/emails') return payload;
      const subject = (request.body as { subject?: string } | undefined)?.subject ?? '';
      const key = request.headers['idempotency-key'] as string | undefined;
      const attempt = seen.filter((s) => s.subject === subject).length;
      seen.push({ subject, key });
      if (subject.startsWith('lost answer') && attempt === 0) {
        reply.code(502);
        return JSON.stringify({ type: 'about:blank', status: 502, title: 'Bad gateway', code: 'bad_gateway', detail: 'the upstream answer was lost' });
      }
      // Well past the first test's timeout, which leaves its retry room on a loaded machine.
      if (subject.startsWith('slow answer') && attempt === 0) await new Promise((r) => setTimeout(r, 2_500));
      return payload;
    });
  },
});
const email = (subject: string) => ({ to: 'ada@example.net', from: { email: 'hello@acme.test' }, subject, text: 'x' });

async function storedWithSubject(subject: string): Promise<number> {
  const { rows } = await server.pool.query('SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND subject = $2', [server.acme.accountId, subject]);
  return rows[0].n;
}

test('sdk retries: a 502 after the server accepted is retried with the same Idempotency-Key and the send is stored once', async () => {
  clock.set('2026-11-30T11:00:00.000Z');
  const postline = new Postline({ apiKey: server.acme.liveKey, baseUrl: server.baseUrl });
  const sent = await postline.emails.send(email('lost answer 1'));
  const attempts = seen.filter((s) => s.subject === 'lost answer 1');
  assert.equal(attempts.length, 2);
  assert.ok(attempts[0].key && attempts[0].key === attempts[1].key, 'one key for both attempts');
  assert.equal(await storedWithSubject('lost answer 1'), 1);
  const { rows } = await server.pool.query('SELECT subject FROM messages WHERE id = $1', [sent.id]);
  assert.deepEqual(rows, [{ subject: 'lost answer 1' }], 'the answer names the stored message');
});

test('sdk retries: an answer slower than the timeout is retried and replayed, not sent twice', async () => {
  clock.set('2026-11-30T12:00:00.000Z');
  const postline = new Postline({ apiKey: server.acme.liveKey, baseUrl: server.baseUrl, timeoutMs: 1_000 });
  const sent = await postline.emails.send(email('slow answer 1'));
  assert.equal(seen.filter((s) => s.subject === 'slow answer 1').length, 2);
  assert.equal(await storedWithSubject('slow answer 1'), 1);
  assert.match(sent.id, /^msg_/);
});

test('sdk retries: without retries left a timeout is a PostlineError with code timeout', async () => {
  clock.set('2026-11-30T13:00:00.000Z');
  const postline = new Postline({ apiKey: server.acme.liveKey, baseUrl: server.baseUrl, timeoutMs: 300, maxRetries: 0 });
  const err = await postline.emails.send(email('slow answer 2')).catch((e: unknown) => e);
  assert.ok(err instanceof PostlineError);
  assert.deepEqual([err.status, err.code], [0, 'timeout']);
});

test('sdk retries: a 429 is retried after its Retry-After', async () => {
  // Two requests a minute; the window ends one second after the clock's time.
  clock.set('2026-11-30T14:00:59.000Z');
  const postline = new Postline({ apiKey: server.acme.liveKey, baseUrl: server.baseUrl });
  await postline.emails.send(email('rate 1'));
  await postline.emails.send(email('rate 2'));
  // The server's minute ends when its clock moves on; the SDK must not have retried before then.
  const started = Date.now();
  const moved = setTimeout(() => clock.set('2026-11-30T14:01:00.500Z'), 600);
  const third = await postline.emails.send(email('rate 3'));
  clearTimeout(moved);
  assert.ok(Date.now() - started >= 1000, `waited ${Date.now() - started} ms for Retry-After: 1`);
  assert.match(third.id, /^msg_/);
  assert.equal(await storedWithSubject('rate 3'), 1);
});

test('sdk retries: a 429 asking for longer than maxRetryAfter is thrown at once with retryAfter', async () => {
  clock.set('2026-11-30T15:00:00.000Z');
  const postline = new Postline({ apiKey: server.acme.liveKey, baseUrl: server.baseUrl, maxRetryAfter: 5 });
  await postline.emails.send(email('long 1'));
  await postline.emails.send(email('long 2'));
  const err = await postline.emails.send(email('long 3')).catch((e: unknown) => e);
  assert.ok(err instanceof PostlineError);
  assert.deepEqual([err.status, err.code, err.retryAfter], [429, 'rate_limited', 60]);
});

test('sdk retries: a 4xx other than 429 is not retried', async () => {
  clock.set('2026-11-30T16:00:00.000Z');
  const postline = new Postline({ apiKey: server.acme.liveKey, baseUrl: server.baseUrl });
  const before = seen.length;
  await assert.rejects(postline.emails.send({ ...email('bad'), to: 'nope' }), PostlineError);
  assert.equal(seen.length - before, 1);
});
