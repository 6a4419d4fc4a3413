import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { basicEmail, startMailEnv } from '../helpers/mail-env.js';
import { startSmtpMx, type MxRule } from '../helpers/smtp-mx.js';
import { deliveryStatus } from '../../src/delivery/status.js';

/**
 * Throttle and greylisting replies through the engine, on a clock the test moves: the relay
 * (an SES-like smarthost) answering 454 Throttling failure, and an MX greylisting.
 */
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const relay = await startSmtpMx({ starttls: false });
after(() => relay.close());
const env = await startMailEnv({ clock, env: { POSTLINE_DELIVERY: 'relay', POSTLINE_SMTP_RELAY: `smtp://127.0.0.1:${relay.port}` } });

async function statusOf(id: string) {
  return (await env.app.inject({ url: `/api/v1/emails/${id}`, headers: env.acme.live })).json();
}

test('relay: 454 Throttling failure defers the message (never a bounce), suspends the relay for every message, then all are delivered', async () => {
  let rule: MxRule = { code: 454, message: 'Throttling failure: Maximum sending rate exceeded.' };
  relay.setRule(() => rule);
  const first = (await env.send(basicEmail({ to: 'one@example.net' }))).json().id;
  assert.equal(await env.deliverAll(), 1);
  const s = await statusOf(first);
  assert.equal(s.status, 'deferred');
  const deferred = s.events.at(-1);
  assert.equal(deferred.type, 'deferred');
  assert.equal(deferred.data.reason, 'throttled');
  assert.match(deferred.data.response, /^454 Throttling failure/);
  // The shipped relay rule suspends it for 10 s: the message comes back then, not on the 1-minute schedule.
  assert.equal(s.nextAttemptAt, new Date(clock.now().getTime() + 10_000).toISOString());
  // Mail queued meanwhile waits for the relay too: nothing is claimed while it is suspended.
  const second = (await env.send(basicEmail({ to: 'two@example.net' }))).json().id;
  clock.advance(5_000);
  assert.equal(await env.deliverAll(), 0);
  assert.equal((await statusOf(second)).status, 'queued');
  // The suspension is visible in the status and the metrics.
  const [relayStatus] = (await deliveryStatus(env.pool, env.config.deliveryPolicy, clock.now())).filter((d) => d.name === 'relay');
  assert.equal(relayStatus.suspendedUntil, new Date(clock.now().getTime() + 5_000).toISOString());
  assert.match(relayStatus.lastThrottleReply!, /^454 Throttling failure/);
  assert.equal(relayStatus.rateFactor, 0.5);
  const metrics = (await env.app.inject({ url: '/metrics' })).body;
  assert.match(metrics, /postline_delivery_suspended_until_seconds\{destination="relay",provider="relay",source=""\} \d+/);
  assert.match(metrics, /postline_delivery_max_connections\{destination="relay",provider="relay",source=""\} 10/);
  rule = 'accept';
  clock.advance(5_000);
  await env.engine.shaping.refreshShared();
  assert.equal(await env.deliverAll(), 2);
  assert.equal((await statusOf(first)).status, 'delivered');
  assert.equal((await statusOf(second)).status, 'delivered');
  const bounces = await env.pool.query(`SELECT count(*)::int AS n FROM events WHERE type IN ('hard_bounce', 'soft_bounce')`);
  assert.equal(bounces.rows[0].n, 0);
  const [row] = (await env.pool.query(`SELECT last_throttle_reply, rate_factor FROM delivery_shaping WHERE destination = 'relay'`)).rows;
  assert.match(row.last_throttle_reply, /Maximum sending rate exceeded/);
});

test('greylisting: 451 4.7.1 is retried after greylistRetry (5 minutes by default), not on the backoff schedule, and then delivered', async () => {
  const seen = new Set<string>();
  relay.setRule((rcpt) => (seen.has(rcpt) ? 'accept' : (seen.add(rcpt), { code: 451, message: '4.7.1 Greylisted, please try again later' })));
  const id = (await env.send(basicEmail({ to: 'grey@example.net' }))).json().id;
  await env.deliverAll();
  const s = await statusOf(id);
  assert.equal(s.status, 'deferred');
  assert.equal(s.events.at(-1).data.reason, 'greylisted');
  assert.equal(s.nextAttemptAt, new Date(clock.now().getTime() + 5 * 60_000).toISOString());
  clock.advance(5 * 60_000);
  await env.deliverAll();
  const done = await statusOf(id);
  assert.equal(done.status, 'delivered');
  assert.deepEqual(done.events.map((e: { type: string }) => e.type), ['sent', 'deferred', 'delivered']);
});
