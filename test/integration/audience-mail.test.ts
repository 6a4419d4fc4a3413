import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import pino from 'pino';
import { ManualClock } from '../../src/clock.js';
import { TrackingLinks } from '../../src/domain/tracking/links.js';
import { runConfirmationMails } from '../../src/workers/index.js';
import { basicEmail, RECIPIENT_DOMAIN, SENDER_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app, pool, acme, mx } = env;
const json = { ...acme.live, 'content-type': 'application/json' };
const workerDeps = { config: env.config, pool, clock, log: pino({ level: 'silent' }) };
const links = new TrackingLinks(env.config);

async function subscriber(email: string) {
  return (await app.inject({ url: `/api/v1/subscribers/${encodeURIComponent(email)}`, headers: acme.live })).json();
}

test('double opt-in end to end: the confirmation mail reaches the MX, signed, and its link activates the subscriber', async () => {
  const list = (await app.inject({ method: 'POST', url: '/api/v1/lists', headers: json, payload: { name: 'Weekly news', doubleOptIn: true } })).json();
  const email = `reader@${RECIPIENT_DOMAIN}`;
  const created = await app.inject({ method: 'POST', url: '/api/v1/subscribers', headers: json, payload: { email, name: 'Rea', list: list.id } });
  assert.equal(created.statusCode, 201);
  assert.equal(created.json().status, 'unconfirmed');

  assert.equal(await runConfirmationMails(workerDeps, links), 1);
  assert.equal(await runConfirmationMails(workerDeps, links), 0, 'sent once');
  await env.deliverAll();
  const received = mx.messages.find((m) => m.envelope.to.includes(email))!;
  assert.ok(received, 'the confirmation mail reached the MX');
  const verdicts = await env.verifyDkim(received.raw);
  assert.ok(verdicts.every((v) => v.result === 'pass') && verdicts.length === 2);
  const parsed = await simpleParser(received.raw);
  assert.equal(parsed.from?.value[0].address, `no-reply@${SENDER_DOMAIN}`);
  assert.match(parsed.subject ?? '', /Weekly news/);
  const link = /https:\/\/postline\.test(\/confirm\/[^\s"<]+)/.exec(String(parsed.html))![1];
  assert.ok(!String(parsed.html).includes('/t/c/') || !String(parsed.html).match(/\/t\/c\/[^"]*confirm/), 'the confirm link is not click-tracked');

  const confirmed = await app.inject({ url: link });
  assert.equal(confirmed.statusCode, 200);
  assert.equal((await subscriber(email)).status, 'active');
});

test('suppression and subscribers agree: a hard bounce marks the subscriber bounced; re-subscribing makes it active', async () => {
  const email = `bouncer@${RECIPIENT_DOMAIN}`;
  await app.inject({ method: 'POST', url: '/api/v1/subscribers', headers: json, payload: { email } });
  assert.equal((await subscriber(email)).status, 'active');
  mx.setRule((rcpt) => (rcpt === email ? 'reject' : 'accept'));
  await env.send(basicEmail({ to: email }));
  await env.deliverAll();
  assert.equal((await subscriber(email)).status, 'bounced');
  const resub = await app.inject({ method: 'DELETE', url: `/api/v1/suppression?email=${encodeURIComponent(email)}`, headers: acme.live });
  assert.equal(resub.statusCode, 200);
  assert.equal((await subscriber(email)).status, 'active');
  mx.setRule(() => 'accept');
});

test('suppression and subscribers agree: a manual suppression with reason complaint marks the subscriber complained', async () => {
  const email = `angry@${RECIPIENT_DOMAIN}`;
  await app.inject({ method: 'POST', url: '/api/v1/subscribers', headers: json, payload: { email } });
  const res = await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: json, payload: { email, reason: 'complaint' } });
  assert.equal(res.statusCode, 201);
  assert.equal((await subscriber(email)).status, 'complained');
  await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: json, payload: { entries: [{ email: `bulk-unsub@${RECIPIENT_DOMAIN}`, reason: 'unsubscribe' }] } });
});

test('suppression and subscribers agree: one-click unsubscribe from a real message marks the subscriber unsubscribed', async () => {
  const email = `leaver@${RECIPIENT_DOMAIN}`;
  await app.inject({ method: 'POST', url: '/api/v1/subscribers', headers: json, payload: { email } });
  await env.send(basicEmail({ to: email }));
  await env.deliverAll();
  const raw = mx.messages.find((m) => m.envelope.to.includes(email))!.raw.toString().replace(/\r\n[ \t]+/g, ' ');
  const url = /List-Unsubscribe: <https:\/\/postline\.test(\/u\/[^>]+)>/.exec(raw)![1];
  const res = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
  assert.equal(res.statusCode, 200);
  assert.equal((await subscriber(email)).status, 'unsubscribed');
});
