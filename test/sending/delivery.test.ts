import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.js';
import { basicEmail, RECIPIENT_DOMAIN, SENDER_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app, pool, mx, dns } = env;
const rules = new Map<string, 'accept' | 'defer' | 'reject' | { code: number; message: string }>();
mx.setRule((rcpt) => rules.get(rcpt.toLowerCase()) ?? 'accept');

async function statusOf(id: string) {
  return (await app.inject({ url: `/api/v1/emails/${id}`, headers: env.acme.live })).json();
}

test('delivery: an accepted message reaches the MX, DKIM-signed with RSA and Ed25519 that verify through DNS', async () => {
  const res = await env.send(basicEmail());
  assert.equal(res.statusCode, 202);
  const { id } = res.json();
  assert.equal(await env.deliverAll(), 1);
  const [received] = await mx.waitForMessages(1);
  const raw = received.raw.toString();
  assert.match(raw, new RegExp(`Message-ID: <${id}@${SENDER_DOMAIN}>`, 'i'));
  const verdicts = await env.verifyDkim(received.raw);
  assert.equal(verdicts.length, 2, JSON.stringify(verdicts));
  for (const v of verdicts) {
    assert.equal(v.result, 'pass', JSON.stringify(verdicts));
    assert.equal(v.domain, SENDER_DOMAIN);
  }
  assert.deepEqual(verdicts.map((v) => v.algo.split('-')[0]).sort(), ['ed25519', 'rsa']);
  assert.match(received.envelope.from, new RegExp(`^bounces\\+${id}=[0-9a-f]+@bounces\\.${SENDER_DOMAIN.replace('.', '\\.')}$`, 'i'));
  const after = await statusOf(id);
  assert.equal(after.status, 'delivered');
  assert.deepEqual(after.events.map((e: { type: string }) => e.type), ['sent', 'delivered']);
  assert.match(after.events[1].data.response, /^250/);
});

test('delivery: every message carries List-Unsubscribe one-click headers covered by DKIM, a footer and tracked links', async () => {
  const { id } = (await env.send(basicEmail({ to: `lu@${RECIPIENT_DOMAIN}` }))).json();
  await env.deliverAll();
  const received = mx.messages.find((m) => m.envelope.to.includes(`lu@${RECIPIENT_DOMAIN}`))!;
  const raw = received.raw.toString().replace(/\r\n[ \t]+/g, ' '); // unfold headers
  assert.match(raw, /List-Unsubscribe: <https:\/\/postline\.test\/u\/[^>]+>, <mailto:bounces\+/);
  assert.match(raw, /List-Unsubscribe-Post: List-Unsubscribe=One-Click/);
  const signed = /DKIM-Signature:[^\r\n]*?h=([^;]+);/i.exec(raw)![1].replace(/\s+/g, '').toLowerCase().split(':');
  assert.ok(signed.includes('list-unsubscribe') && signed.includes('list-unsubscribe-post'), signed.join(':'));
  const parsed = await simpleParser(received.raw);
  const html = String(parsed.html);
  assert.ok(!html.includes('https://acme.test/offer'), 'the original link is rewritten');
  assert.match(html, /href="https:\/\/postline\.test\/t\/c\/[^"]+"/);
  assert.match(html, /<img src="https:\/\/postline\.test\/t\/o\/[^"]+"/);
  assert.match(html, /<a href="https:\/\/postline\.test\/u\/[^"]+"[^>]*>Unsubscribe<\/a>/);
  assert.match(parsed.text ?? '', /https:\/\/postline\.test\/u\//);
  assert.ok(!(parsed.text ?? '').includes('https://acme.test/offer'));
  assert.equal((await statusOf(id)).status, 'delivered');
});

test('delivery: 451 defers with a retry on the backoff schedule, then delivers', async () => {
  const to = `slow@${RECIPIENT_DOMAIN}`;
  rules.set(to, 'defer');
  const { id } = (await env.send(basicEmail({ to }))).json();
  await env.deliverAll();
  let s = await statusOf(id);
  assert.equal(s.status, 'deferred');
  assert.equal(s.nextAttemptAt, new Date(clock.now().getTime() + 60_000).toISOString());
  assert.equal(s.events.at(-1).type, 'deferred');
  assert.match(s.events.at(-1).data.response, /^451/);
  assert.equal(await env.deliverAll(), 0, 'not due before the retry time');
  clock.advance(60_000);
  rules.set(to, 'accept');
  await env.deliverAll();
  s = await statusOf(id);
  assert.equal(s.status, 'delivered');
  assert.equal(s.attempts, 2);
  assert.deepEqual(s.events.map((e: { type: string }) => e.type), ['sent', 'deferred', 'delivered']);
});

test('delivery: 550 hard-bounces and suppresses the recipient', async () => {
  const to = `gone@${RECIPIENT_DOMAIN}`;
  rules.set(to, 'reject');
  const { id } = (await env.send(basicEmail({ to }))).json();
  await env.deliverAll();
  const s = await statusOf(id);
  assert.equal(s.status, 'bounced');
  const bounce = s.events.at(-1);
  assert.equal(bounce.type, 'hard_bounce');
  assert.match(bounce.data.response, /^550/);
  assert.equal(bounce.data.mx, `mx.${RECIPIENT_DOMAIN}`);
  const check = (await app.inject({ url: `/api/v1/suppression?email=${to}`, headers: env.acme.live })).json();
  assert.equal(check.suppressed, true);
  assert.equal(check.reason, 'hard_bounce');
  const again = await env.send(basicEmail({ to }));
  assert.equal(again.statusCode, 422);
  assert.equal(again.json().code, 'recipient_suppressed');
});

test('delivery: a sender-side authentication failure (5.7.26) fails the message without suppressing the recipient', async () => {
  const to = `strict@${RECIPIENT_DOMAIN}`;
  rules.set(to, { code: 550, message: '5.7.26 Unauthenticated email from acme.test is not accepted due to domain\'s DMARC policy' });
  const { id } = (await env.send(basicEmail({ to }))).json();
  await env.deliverAll();
  const s = await statusOf(id);
  assert.equal(s.status, 'failed');
  assert.equal(s.events.at(-1).type, 'soft_bounce', 'a hard bounce means a dead address');
  assert.equal(s.events.at(-1).data.ourFault, true);
  assert.equal(s.events.at(-1).data.bounce.reason, 'auth_failure');
  assert.equal(s.events.at(-1).data.bounce.category, 'sender');
  const check = (await app.inject({ url: `/api/v1/suppression?email=${to}`, headers: env.acme.live })).json();
  assert.equal(check.suppressed, false);
});

test('delivery: deferrals past the 72-hour window end in a soft bounce', async () => {
  const to = `never@${RECIPIENT_DOMAIN}`;
  rules.set(to, 'defer');
  const { id } = (await env.send(basicEmail({ to }))).json();
  const start = clock.now().getTime();
  const delays: number[] = [];
  for (let i = 0; i < 30; i++) {
    await env.deliverAll();
    const s = await statusOf(id);
    if (s.status !== 'deferred') break;
    const next = new Date(s.nextAttemptAt).getTime();
    delays.push((next - clock.now().getTime()) / 1000);
    clock.set(new Date(next));
  }
  const s = await statusOf(id);
  assert.equal(s.status, 'failed');
  assert.equal(s.events.at(-1).type, 'soft_bounce');
  assert.deepEqual(delays.slice(0, 6), [60, 300, 900, 3600, 14_400, 28_800]);
  assert.ok(clock.now().getTime() - start <= 72 * 3600 * 1000);
  assert.equal((await app.inject({ url: `/api/v1/suppression?email=${to}`, headers: env.acme.live })).json().suppressed, false);
});

test('delivery: a DNS failure for the recipient domain defers; NXDOMAIN hard-bounces', async () => {
  dns.fail('flaky.example', 'SERVFAIL');
  const a = (await env.send(basicEmail({ to: 'x@flaky.example' }))).json();
  const b = (await env.send(basicEmail({ to: 'x@nowhere.example' }))).json();
  await env.deliverAll();
  assert.equal((await statusOf(a.id)).status, 'deferred');
  assert.equal((await statusOf(b.id)).status, 'bounced');
});

test('delivery: a worker that dies after claiming loses nothing: the lease expires and another worker delivers', async () => {
  const to = `lease@${RECIPIENT_DOMAIN}`;
  const { id } = (await env.send(basicEmail({ to }))).json();
  const { claimDueMessages } = await import('../../src/delivery/queue.js');
  const claimed = await claimDueMessages(pool, 'dead-worker', clock.now(), 10, 5 * 60_000);
  assert.ok(claimed.some((m) => m.id === id));
  assert.equal((await statusOf(id)).status, 'sending');
  const second = env.newEngine();
  assert.equal(await env.deliverAll(second), 0, 'leased: not claimable yet');
  clock.advance(5 * 60_000);
  await env.deliverAll(second);
  assert.equal((await statusOf(id)).status, 'delivered');
  assert.equal(mx.messages.filter((m) => m.envelope.to.includes(to)).length, 1);
});

test('delivery: scheduled messages wait for their time', async () => {
  const at = new Date(clock.now().getTime() + 3600_000).toISOString();
  const res = await env.send(basicEmail({ to: `later@${RECIPIENT_DOMAIN}`, scheduledAt: at }));
  assert.equal(res.statusCode, 202);
  assert.equal(res.json().status, 'scheduled');
  await env.deliverAll();
  assert.equal((await statusOf(res.json().id)).status, 'scheduled');
  clock.advance(3600_000);
  await env.deliverAll();
  const s = await statusOf(res.json().id);
  assert.equal(s.status, 'delivered');
  assert.equal(s.scheduledAt, at);
});

test('delivery: many messages to one domain reuse SMTP connections', async () => {
  const before = mx.connectionCount;
  for (let i = 0; i < 20; i++) await env.send(basicEmail({ to: `bulk${i}@${RECIPIENT_DOMAIN}` }));
  await env.deliverAll();
  assert.ok(mx.connectionCount - before <= 10, `${mx.connectionCount - before} connections for 20 messages`);
  void RECIPIENT_DOMAIN;
});
