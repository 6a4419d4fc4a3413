import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import nodemailer from 'nodemailer';
import pino from 'pino';
import { ManualClock } from '../../src/clock.js';
import { startSmtpListener } from '../../src/inbound/smtp-listener.js';
import { HEALTH_RULES } from '../../src/domain/stats/account-health.js';
import { createTestAccount } from '../helpers/app.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';
import { aboutMessage, emailOf, sendReal, type SentMessage } from '../inbound/env.js';

/**
 * The bounce taxonomy end to end, through the real delivery engine (SMTP replies from the
 * loopback MX) and the real inbound SMTP listener (bounce mails to the VERP address): only a
 * dead address is suppressed; a sender-side refusal never is, whatever its code.
 */
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock, env: { POSTLINE_SMTP_PORT: '0' } });
const { app, pool, mx } = env;
const listener = await startSmtpListener({ config: env.config, pool, clock, log: pino({ level: 'silent' }) }, { host: '127.0.0.1' });
after(() => listener.close());
const rules = new Map<string, { code: number; message: string }>();
mx.setRule((rcpt) => rules.get(rcpt.toLowerCase()) ?? 'accept');

const at = (local: string) => `${local}@${RECIPIENT_DOMAIN}`;
const sample = (name: string) => readFileSync(new URL(`../fixtures/bounces/${name}`, import.meta.url), 'utf8');

async function suppression(email: string): Promise<{ suppressed: boolean; reason: string | null }> {
  return (await app.inject({ url: `/api/v1/suppression?email=${encodeURIComponent(email)}`, headers: env.acme.live })).json();
}

async function entry(email: string): Promise<{ reason: string; bounceReason: string | null; detail: string | null } | undefined> {
  const list = (await app.inject({ url: `/api/v1/suppression?q=${encodeURIComponent(email)}`, headers: env.acme.live })).json();
  return list.data[0];
}

function deliverBounce(msg: SentMessage, raw: string) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, tls: { rejectUnauthorized: false } });
  return transport.sendMail({ envelope: { from: '', to: [msg.verp] }, raw }).finally(() => transport.close());
}

const SENDER_SIDE_REPLIES: [string, string, { code: number; message: string }][] = [
  ['blocked', 'spamhaus', { code: 554, message: '5.7.1 Service unavailable; Client host [203.0.113.5] blocked using zen.spamhaus.org' }],
  ['auth_failure', 'dmarc', { code: 550, message: '5.7.26 This mail has been blocked because the sender is unauthenticated.' }],
  ['spam_detected', 'spam', { code: 554, message: '5.7.1 Message rejected as spam by Content Filtering' }],
  ['policy_violation', 'policy', { code: 550, message: 'Administrative prohibition' }],
  ['no_relaying', 'relay', { code: 554, message: '5.7.1 Relay access denied' }],
  ['blocked', 'block-5-1-1', { code: 550, message: '5.1.1 Your IP 203.0.113.5 is on our block list' }],
];

for (const [reason, local, reply] of SENDER_SIDE_REPLIES) {
  test(`delivery engine: a sender-side ${reply.code} (${reason}) fails the message, records a sender soft_bounce, never suppresses`, async () => {
    rules.set(at(local), reply);
    const { id } = (await env.send(basicEmail({ to: at(local) }))).json();
    await env.deliverAll();
    const email = await emailOf(env, id);
    assert.equal(email.status, 'failed');
    const last = email.events.at(-1)!;
    assert.equal(last.type, 'soft_bounce');
    assert.deepEqual(last.data.bounce, { reason, category: 'sender', status: last.data.enhancedCode ?? null, diagnostic: last.data.response, mta: `mx.${RECIPIENT_DOMAIN}` });
    assert.equal(last.data.ourFault, true);
    assert.equal((await suppression(at(local))).suppressed, false);
  });
}

test('delivery engine: 550 5.1.1 user unknown is a hard_bounce that suppresses, the entry recording its reason; GET /emails shows the bounce', async () => {
  rules.set(at('gone'), { code: 550, message: '5.1.1 <gone@example.net>: Recipient address rejected: User unknown' });
  const { id } = (await env.send(basicEmail({ to: at('gone') }))).json();
  await env.deliverAll();
  const email = (await app.inject({ url: `/api/v1/emails/${id}`, headers: env.acme.live })).json();
  assert.equal(email.status, 'bounced');
  assert.deepEqual({ ...email.bounce, occurredAt: undefined }, {
    type: 'hard_bounce', reason: 'user_unknown', category: 'dead', status: '5.1.1', occurredAt: undefined,
    diagnostic: '550 5.1.1 <gone@example.net>: Recipient address rejected: User unknown', mta: `mx.${RECIPIENT_DOMAIN}`,
  });
  assert.equal(email.recipients[0].bounce.reason, 'user_unknown');
  const e = await entry(at('gone'));
  assert.deepEqual([e?.reason, e?.bounceReason], ['hard_bounce', 'user_unknown']);
});

test('delivery engine: 552 5.2.2 mailbox full is a recipient-side soft_bounce: status bounced, no retry, no suppression', async () => {
  rules.set(at('full'), { code: 552, message: '5.2.2 Mailbox full' });
  const { id } = (await env.send(basicEmail({ to: at('full') }))).json();
  await env.deliverAll();
  const email = await emailOf(env, id);
  assert.equal(email.status, 'bounced');
  assert.deepEqual(email.events.map((e) => e.type), ['sent', 'soft_bounce']);
  assert.equal((email.events[1].data.bounce as { category: string }).category, 'recipient');
  assert.equal((await suppression(at('full'))).suppressed, false);
});

test('inbound listener: a sender-side bounce mail (554 5.7.1 spam) after a 250 records a soft_bounce and never suppresses', async () => {
  const msg = await sendReal(env, 'lena');
  await deliverBounce(msg, aboutMessage(sample('postfix-dsn-spam.eml'), msg, ['lena@receiver.example.net']));
  const email = await emailOf(env, msg.id);
  assert.deepEqual(email.events.map((e) => e.type), ['sent', 'delivered', 'soft_bounce']);
  assert.deepEqual((email.events[2].data.bounce as { reason: string; category: string }), {
    reason: 'spam_detected', category: 'sender', status: '5.7.1', diagnostic: '554 5.7.1 Message rejected as spam by Content Filtering', mta: 'mx.receiver.example.net',
  });
  assert.equal(email.events[2].data.ourFault, true);
  assert.equal((await suppression(msg.to)).suppressed, false);
});

test('inbound listener: a sender-side plain-text bounce (Google Groups, no permission to post) never suppresses', async () => {
  const msg = await sendReal(env, 'product-team');
  await deliverBounce(msg, aboutMessage(sample('google-groups.eml'), msg, ['product-team@googlegroups.com']).replace('To: hello@example.com', `To: ${msg.verp}`));
  const email = await emailOf(env, msg.id);
  assert.deepEqual(email.events.map((e) => e.type), ['sent', 'delivered', 'soft_bounce']);
  assert.equal((email.events[2].data.bounce as { reason: string }).reason, 'rejected');
  assert.equal((await suppression(msg.to)).suppressed, false);
});

test('inbound listener: an Exim plain-text bounce (550 5.1.1) → hard_bounce, suppression with reason user_unknown', async () => {
  const msg = await sendReal(env, 'rita');
  await deliverBounce(msg, aboutMessage(sample('exim-user-unknown.eml'), msg, ['rita.fox@shop.example.net']));
  const email = await emailOf(env, msg.id);
  assert.equal(email.status, 'bounced');
  assert.deepEqual(email.events.map((e) => e.type), ['sent', 'delivered', 'hard_bounce']);
  assert.equal(email.events[2].data.format, 'text');
  const e = await entry(msg.to);
  assert.deepEqual([e?.reason, e?.bounceReason], ['hard_bounce', 'user_unknown']);
  const [row] = (await pool.query('SELECT kind, format FROM inbound_messages WHERE message_id = $1', [msg.id])).rows;
  assert.deepEqual(row, { kind: 'bounce', format: 'text' });
});

test('inbound listener: an out-of-office reply and a delivered notice produce no bounce', async () => {
  const msg = await sendReal(env, 'dana');
  await deliverBounce(msg, aboutMessage(sample('autoreply-out-of-office.eml'), msg).replace('To: hello@example.com', `To: ${msg.verp}`));
  await deliverBounce(msg, aboutMessage(sample('delivered-exchange-text.eml'), msg, ['reader@corp.example.org']));
  assert.deepEqual((await emailOf(env, msg.id)).events.map((e) => e.type), ['sent', 'delivered']);
  const kinds = (await pool.query('SELECT kind FROM inbound_messages WHERE message_id = $1 ORDER BY id', [msg.id])).rows.map((r) => r.kind);
  assert.deepEqual(kinds, ['auto_reply', 'delivered']);
});

test('account health: sender-side bounces surface there, by reason, with a status', async () => {
  const res = await app.inject({ url: '/api/v1/account/health', headers: env.acme.live });
  assert.equal(res.statusCode, 200, res.body);
  const h = res.json();
  assert.equal(h.windowDays, 7);
  assert.deepEqual(h.senderSide.byReason, { blocked: 2, auth_failure: 1, spam_detected: 2, policy_violation: 1, no_relaying: 1, rejected: 1 });
  assert.equal(h.senderSide.total, 8);
  assert.ok(h.hardBounces >= 2, 'gone@ and rita');
  assert.ok(h.sent >= 10 && h.sent < 20);
  assert.deepEqual([h.status, h.issues], ['ok', []], `rates of fewer than ${HEALTH_RULES.minSent} sends are not judged`);
  for (let i = 0; i < HEALTH_RULES.minSent - h.sent; i++) assert.equal((await env.send(basicEmail({ to: at(`fine-${i}`) }))).statusCode, 202);
  await env.deliverAll();
  const judged = (await app.inject({ url: '/api/v1/account/health', headers: env.acme.live })).json();
  assert.equal(judged.status, 'critical', `8 sender-side refusals in ${HEALTH_RULES.minSent} sends`);
  assert.deepEqual(judged.issues.map((i: { code: string }) => i.code), ['sender_side_bounces'], 'hard bounces are below 5 %');
  const stats = (await app.inject({ url: '/api/v1/stats', headers: env.acme.live })).json().health;
  assert.deepEqual([stats.status, stats.senderSideRate], ['at_risk', judged.senderSide.rate], 'GET /stats judges the same health');
  assert.match(judged.issues[0].message, /receivers refused our mail \((?:blocked|spam_detected), (?:blocked|spam_detected), /);
});

test('account health: days is 1–90; outside is 422; another account sees only its own', async () => {
  for (const days of ['0', '91', 'x']) {
    assert.equal((await app.inject({ url: `/api/v1/account/health?days=${days}`, headers: env.acme.live })).statusCode, 422, days);
  }
  assert.equal((await app.inject({ url: '/api/v1/account/health?days=90', headers: env.acme.live })).json().windowDays, 90);
  const other = await createTestAccount(pool, 'Other');
  const h = (await app.inject({ url: '/api/v1/account/health', headers: other.live })).json();
  assert.deepEqual([h.sent, h.senderSide.total, h.status], [0, 0, 'ok']);
  assert.equal((await app.inject({ url: '/api/v1/account/health', headers: other.test })).statusCode, 200);
  for (const bad of ['%00', '%ED%A0%80', '7%00', '1e999', '-1', '7&days=8']) {
    const res = await app.inject({ url: `/api/v1/account/health?days=${bad}`, headers: env.acme.live });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${bad}: ${res.statusCode}`);
  }
  assert.equal((await app.inject({ url: '/api/v1/account/health?other=1', headers: env.acme.live })).statusCode, 422, 'unknown parameters are refused');
  assert.equal((await app.inject({ url: '/api/v1/account/health' })).statusCode, 401);
});

test('30-day rule: an address soft-bouncing (recipient side) on every send for 30 days, three messages, is suppressed; earlier it is not', async () => {
  const to = at('always-full');
  rules.set(to, { code: 552, message: '5.2.2 Mailbox full' });
  const sendOnce = async () => {
    const res = await env.send(basicEmail({ to }));
    assert.equal(res.statusCode, 202, res.body);
    await env.deliverAll();
  };
  await sendOnce();
  clock.advance(20 * 86_400_000);
  await sendOnce();
  assert.equal((await suppression(to)).suppressed, false, 'two soft bounces in 20 days: not yet');
  clock.advance(11 * 86_400_000);
  await sendOnce();
  const e = await entry(to);
  assert.deepEqual([e?.reason, e?.bounceReason], ['hard_bounce', 'mailbox_full']);
  assert.match(String(e?.detail), /soft-bounced on every message for 30 days \(3 messages/);
});

test('30-day rule: a delivery in between starts the count again; sender-side failures never count', async () => {
  const to = at('sometimes-full');
  const sendOnce = async (reply: { code: number; message: string } | null) => {
    if (reply) rules.set(to, reply);
    else rules.delete(to);
    assert.equal((await env.send(basicEmail({ to }))).statusCode, 202);
    await env.deliverAll();
  };
  await sendOnce({ code: 552, message: '5.2.2 Mailbox full' });
  clock.advance(15 * 86_400_000);
  await sendOnce(null); // delivered: the address lives
  clock.advance(10 * 86_400_000);
  await sendOnce({ code: 552, message: '5.2.2 Mailbox full' });
  clock.advance(10 * 86_400_000);
  await sendOnce({ code: 554, message: '5.7.1 Client host [203.0.113.5] blocked using zen.spamhaus.org' });
  clock.advance(10 * 86_400_000);
  await sendOnce({ code: 552, message: '5.2.2 Mailbox full' });
  assert.equal((await suppression(to)).suppressed, false, 'only 2 recipient-side soft bounces since the delivery, 20 days apart');
});

test('delivery engine: a generic 5.1.1 whose words blame us (filtered for this sender) is sender-side, ourFault, never suppressed', async () => {
  const to = at('filtered-here');
  rules.set(to, { code: 550, message: '5.2.1 <filtered-here@example.net>: Mailbox disabled for this sender' });
  const { id } = (await env.send(basicEmail({ to }))).json();
  await env.deliverAll();
  const last = (await emailOf(env, id)).events.at(-1)!;
  assert.equal(last.type, 'soft_bounce');
  assert.deepEqual([(last.data.bounce as { reason: string }).reason, last.data.ourFault], ['filtered', true]);
  assert.equal((await suppression(to)).suppressed, false);
});

const DISABLED = { code: 550, message: '5.2.1 The email account that you tried to reach is disabled.' };

test('suspended rule: a disabled mailbox is soft the first and second time; the third within 30 days, a day apart, suppresses it', async () => {
  const to = at('disabled-account');
  rules.set(to, DISABLED);
  const sendOnce = async () => {
    assert.equal((await env.send(basicEmail({ to }))).statusCode, 202);
    await env.deliverAll();
  };
  await sendOnce();
  assert.equal((await suppression(to)).suppressed, false, 'first: soft');
  clock.advance(6 * 86_400_000);
  await sendOnce();
  assert.equal((await suppression(to)).suppressed, false, 'second: soft');
  clock.advance(6 * 86_400_000);
  await sendOnce();
  const e = await entry(to);
  assert.deepEqual([e?.reason, e?.bounceReason], ['hard_bounce', 'suspended']);
  assert.match(String(e?.detail), /^suspended on 3 messages within 30 days/);
});

test('suspended rule: three in one hour do not suppress; a delivery in between starts the count again', async () => {
  const burst = at('disabled-burst');
  rules.set(burst, DISABLED);
  for (let i = 0; i < 3; i++) {
    assert.equal((await env.send(basicEmail({ to: burst }))).statusCode, 202);
    await env.deliverAll();
    clock.advance(10 * 60_000);
  }
  assert.equal((await suppression(burst)).suppressed, false, 'a burst says nothing about tomorrow');
  const back = at('disabled-then-back');
  for (const reply of [DISABLED, DISABLED, null, DISABLED]) {
    if (reply) rules.set(back, reply);
    else rules.delete(back);
    assert.equal((await env.send(basicEmail({ to: back }))).statusCode, 202);
    await env.deliverAll();
    clock.advance(2 * 86_400_000);
  }
  assert.equal((await suppression(back)).suppressed, false, 'the account came back in between');
});
