import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { TrackingLinks } from '../../src/domain/tracking/links.js';
import { signUnsubscribeToken, verifyUnsubscribeToken } from '../../src/domain/tracking/tokens.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';
import { eventsOf, follow, linksOf, receivedBy, sendAndDeliver, tokenOf } from './received.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app } = env;
const key = new TrackingLinks(env.config).tokenKey;

async function suppression(email: string) {
  const res = await app.inject({ url: `/api/v1/suppression?email=${encodeURIComponent(email)}`, headers: env.acme.live });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { suppressed: boolean; reason: string | null };
}

const unsubscribes = async (id: string) => (await eventsOf(env, id)).filter((e) => e.type === 'unsubscribe');

/** A fresh message to `local@example.net`, delivered; its id and what arrived. */
async function delivered(local: string, over: Record<string, unknown> = {}) {
  const to = `${local}@${RECIPIENT_DOMAIN}`;
  const id = await sendAndDeliver(env, basicEmail({ to, ...over }));
  return { id, to, mail: await receivedBy(env, to) };
}

test('footer and headers: both parts carry the unsubscribe link, List-Unsubscribe is https one-click, all one token', async () => {
  const { id, mail } = await delivered('footer');
  const footer = mail.hrefs.find((h) => h.includes('/u/'))!;
  assert.match(footer, /^https:\/\/postline\.test\/u\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  assert.ok(mail.text.includes(footer), 'text part carries the same unsubscribe URL');
  assert.match(mail.listUnsubscribe.url, /^https:\/\/postline\.test\/u\//);
  assert.match(mail.listUnsubscribe.mailto, /^mailto:bounces\+/);
  assert.equal(mail.headers.get('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
  assert.equal(tokenOf(mail.listUnsubscribe.url), tokenOf(footer));
  assert.deepEqual(verifyUnsubscribeToken(key, tokenOf(footer)), { messageId: id });
});

test('page: GET shows a self-contained page naming the address, with one form that POSTs back, and changes nothing', async () => {
  const { id, to, mail } = await delivered('page');
  const res = await follow(app, mail.listUnsubscribe.url);
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
  assert.match(String(res.headers['cache-control']), /no-store/);
  assert.match(String(res.headers['content-security-policy']), /default-src 'none'.*frame-ancestors 'none'/);
  assert.ok(res.body.includes(to));
  assert.match(res.body, /<form method="post">/);
  assert.equal((res.body.match(/<button/g) ?? []).length, 1);
  const { hrefs, images } = linksOf(res.body);
  assert.deepEqual([hrefs, images], [[], []], 'no links or external assets');
  assert.doesNotMatch(res.body, /<(script|link|iframe)\b|src=/i);
  assert.equal((await suppression(to)).suppressed, false);
  assert.deepEqual(await unsubscribes(id), []);
});

test('page: the sender name and the address are HTML-escaped', async () => {
  const { mail } = await delivered("o'brien&co", { from: { email: 'hello@acme.test', name: 'Acme <script>alert(1)</script> & Co' } });
  const res = await follow(app, mail.listUnsubscribe.url);
  assert.equal(res.statusCode, 200);
  assert.ok(res.body.includes('Acme &lt;script&gt;alert(1)&lt;/script&gt; &amp; Co'), res.body);
  assert.ok(res.body.includes('o&#39;brien&amp;co@example.net'), res.body);
  assert.doesNotMatch(res.body, /<script/);
});

test('one-click: RFC 8058 POST without cookies over real HTTP → 200, suppressed (unsubscribe), one event however often posted', async () => {
  const { id, to, mail } = await delivered('oneclick');
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const post = () =>
    fetch(`${address}${new URL(mail.listUnsubscribe.url).pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
      redirect: 'manual',
    });
  const first = await post();
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('set-cookie'), null);
  assert.match(await first.text(), /You are unsubscribed/);
  const s = await suppression(to);
  assert.deepEqual([s.suppressed, s.reason], [true, 'unsubscribe']);
  assert.equal((await post()).status, 200);
  assert.equal((await post()).status, 200);
  const events = await unsubscribes(id);
  assert.equal(events.length, 1);
  assert.equal(events[0].email, to);
});

test('one-click: empty, text and multipart bodies are accepted too; concurrent posts still record one event', async () => {
  const empty = await delivered('empty');
  const res = await follow(app, empty.mail.listUnsubscribe.url, { method: 'POST' });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal((await suppression(empty.to)).reason, 'unsubscribe');

  const plain = await delivered('plain');
  const res2 = await follow(app, plain.mail.listUnsubscribe.url, { method: 'POST', headers: { 'content-type': 'text/plain' }, payload: 'unsubscribe me' });
  assert.equal(res2.statusCode, 200, res2.body);
  assert.equal((await suppression(plain.to)).reason, 'unsubscribe');

  const multi = await delivered('multipart');
  const boundary = '----postline1234';
  const payload = `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`;
  const posts = await Promise.all(
    Array.from({ length: 6 }, () =>
      follow(app, multi.mail.listUnsubscribe.url, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload }),
    ),
  );
  assert.deepEqual(posts.map((p) => p.statusCode), [200, 200, 200, 200, 200, 200]);
  assert.equal((await suppression(multi.to)).reason, 'unsubscribe');
  assert.equal((await unsubscribes(multi.id)).length, 1);
});

test('one-click: the page button (urlencoded form POST to the footer URL) unsubscribes like the header', async () => {
  const { id, to, mail } = await delivered('button');
  const footer = mail.hrefs.find((h) => h.includes('/u/'))!;
  const res = await follow(app, footer, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /You are unsubscribed/);
  assert.ok(res.body.includes(to));
  assert.equal((await suppression(to)).reason, 'unsubscribe');
  assert.equal((await unsubscribes(id)).length, 1);
});

test('one-click: an address already suppressed for another reason keeps it, and this message still gets its event once', async () => {
  const { id, to, mail } = await delivered('bounced');
  const add = await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: env.acme.live, payload: { email: to, reason: 'manual' } });
  assert.ok(add.statusCode < 300, add.body);
  assert.equal((await follow(app, mail.listUnsubscribe.url, { method: 'POST' })).statusCode, 200);
  assert.equal((await follow(app, mail.listUnsubscribe.url, { method: 'POST' })).statusCode, 200);
  assert.equal((await suppression(to)).reason, 'manual');
  assert.equal((await unsubscribes(id)).length, 1);
});

test('one-click: re-subscribed since, a new POST suppresses again and records the change', async () => {
  const { id, to, mail } = await delivered('again');
  await follow(app, mail.listUnsubscribe.url, { method: 'POST' });
  const del = await app.inject({ method: 'DELETE', url: `/api/v1/suppression?email=${encodeURIComponent(to)}`, headers: env.acme.live });
  assert.ok(del.statusCode < 300, del.body);
  assert.equal((await suppression(to)).suppressed, false);
  await follow(app, mail.listUnsubscribe.url, { method: 'POST' });
  assert.equal((await suppression(to)).reason, 'unsubscribe');
  assert.equal((await unsubscribes(id)).length, 2);
});

test('unsubscribe: tampered, foreign, other-kind and sandbox tokens → 404 on GET and POST, nothing suppressed', async () => {
  const { to, mail } = await delivered('tamper');
  const token = tokenOf(mail.listUnsubscribe.url);
  const click = mail.hrefs.find((h) => h.includes('/t/c/'))!;
  const sandbox = (await env.send(basicEmail(), env.acme.test)).json().id;
  const bad = [
    ...[0, 3, token.indexOf('.') - 1, token.indexOf('.'), token.length - 1].map((i) => token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1)),
    token.slice(0, -2),
    signUnsubscribeToken('another-postline-secret-0123456789', verifyUnsubscribeToken(key, token)!.messageId),
    tokenOf(click),
    signUnsubscribeToken(key, sandbox),
  ];
  for (const t of bad) {
    assert.equal((await follow(app, `https://postline.test/u/${t}`)).statusCode, 404, t);
    assert.equal((await follow(app, `https://postline.test/u/${t}`, { method: 'POST', payload: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).statusCode, 404, t);
  }
  assert.equal((await suppression(to)).suppressed, false);
});

test('unsubscribe: API routes still refuse form bodies (the permissive parser is scoped to /u)', async () => {
  const res = await app.inject({ method: 'POST', url: '/api/v1/emails', headers: { ...env.acme.live, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'to=x' });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().code, 'invalid_json');
});
