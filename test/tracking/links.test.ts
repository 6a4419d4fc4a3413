import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { TrackingLinks } from '../../src/domain/tracking/links.js';
import { signOpenToken, signPayload, TOKEN_KINDS, verifyClickToken } from '../../src/domain/tracking/tokens.js';
import type { Pool } from '../../src/db/pool.js';
import { insertClickEvents, insertOpenEvents } from '../../src/db/queries/tracking.js';
import { newId } from '../../src/ids.js';
import { bootApp } from '../helpers/app.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';
import { eventsOf, follow, receivedBy, sendAndDeliver, tokenOf } from './received.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app } = env;
const key = new TrackingLinks(env.config).tokenKey;

const SOURCE_HTML = `<html><body>
<p><a href="https://acme.test/offer?a=1&amp;b=2&amp;q=caf%C3%A9#top">offer</a></p>
<p><a href="https://acme.test/menu?x=a b&amp;y=&quot;quoted&quot;">menu</a></p>
<p><a href="//evil.example/steal">protocol-relative</a> <a href="javascript:alert(document.cookie)">js</a>
<a href=" JavaScript:alert(1)">js2</a> <a href="mailto:help@acme.test">mail</a></p>
</body></html>`;

const to = `links@${RECIPIENT_DOMAIN}`;
const id = await sendAndDeliver(env, basicEmail({ to, html: SOURCE_HTML }));
const mail = await receivedBy(env, to);
const clickLinks = mail.hrefs.filter((h) => h.startsWith('https://postline.test/t/c/'));
const pixel = mail.images.find((s) => s.startsWith('https://postline.test/t/o/'))!;

test('click: every http(s) link in the received HTML is a click URL; others are left as written', () => {
  assert.equal(clickLinks.length, 2, mail.hrefs.join('\n'));
  assert.ok(mail.hrefs.includes('//evil.example/steal'), 'protocol-relative href unrewritten');
  assert.ok(mail.hrefs.includes('javascript:alert(document.cookie)'), 'javascript: href unrewritten');
  assert.ok(mail.hrefs.includes(' JavaScript:alert(1)'), 'javascript: href with odd case and space unrewritten');
  assert.ok(mail.hrefs.includes('mailto:help@acme.test'));
});

test('click: GET → immediate 302 to the original URL, query and fragment intact, and one click event with the url', async () => {
  const res = await follow(app, clickLinks[0], { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' } });
  assert.equal(res.statusCode, 302);
  assert.equal(res.headers.location, 'https://acme.test/offer?a=1&b=2&q=caf%C3%A9#top');
  assert.match(String(res.headers['cache-control']), /no-store/);
  const clicks = (await eventsOf(env, id)).filter((e) => e.type === 'click');
  assert.equal(clicks.length, 1);
  assert.equal(clicks[0].url, 'https://acme.test/offer?a=1&b=2&q=caf%C3%A9#top');
  assert.equal(clicks[0].email, to);
  assert.equal(clicks[0].data.userAgent, 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0');
});

test('click: a URL with a space and quotes redirects to its encoded form; the event keeps it as linked', async () => {
  const res = await follow(app, clickLinks[1]);
  assert.equal(res.statusCode, 302);
  assert.equal(res.headers.location, 'https://acme.test/menu?x=a%20b&y=%22quoted%22');
  const last = (await eventsOf(env, id)).filter((e) => e.type === 'click').at(-1)!;
  assert.equal(last.url, 'https://acme.test/menu?x=a b&y="quoted"');
});

test('click: over real HTTP on a loopback port, the redirect is not followed by us and arrives as 302', async () => {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const res = await fetch(`${address}${new URL(clickLinks[0]).pathname}`, { redirect: 'manual' });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get('location'), 'https://acme.test/offer?a=1&b=2&q=caf%C3%A9#top');
});

test('click: HEAD answers the redirect without recording a click', async () => {
  const before = (await eventsOf(env, id)).filter((e) => e.type === 'click').length;
  const res = await follow(app, clickLinks[0], { method: 'HEAD' });
  assert.equal(res.statusCode, 302);
  assert.equal((await eventsOf(env, id)).filter((e) => e.type === 'click').length, before);
});

test('click: no link in the message redirects to the protocol-relative or javascript: targets', async () => {
  for (const link of clickLinks) {
    const target = verifyClickToken(key, tokenOf(link))!.url;
    assert.match(target, /^https:\/\/acme\.test\//);
  }
  // Even signed with the right key, a non-http(s) target is refused on the way out.
  for (const bad of ['javascript:alert(1)', '//evil.example/steal', 'data:text/html,<script>alert(1)</script>', 'https://']) {
    const forged = signPayload(key, TOKEN_KINDS.click, [id, bad]);
    const res = await follow(app, `https://postline.test/t/c/${forged}`);
    assert.equal(res.statusCode, 404, bad);
    assert.equal(res.headers.location, undefined);
  }
});

test('click: every single-character change of a real token → 404, never a redirect', async () => {
  const token = tokenOf(clickLinks[0]);
  const before = (await eventsOf(env, id)).filter((e) => e.type === 'click').length;
  for (let i = 0; i < token.length; i++) {
    const c = token[i];
    const flipped = token.slice(0, i) + (c === 'A' ? 'B' : c === '.' ? '_' : 'A') + token.slice(i + 1);
    const res = await follow(app, `https://postline.test/t/c/${flipped}`);
    assert.equal(res.statusCode, 404, `position ${i}`);
    assert.equal(res.headers.location, undefined);
  }
  assert.equal((await eventsOf(env, id)).filter((e) => e.type === 'click').length, before, 'no event for a bad token');
});

test('click: truncated, empty, extended, foreign-secret and other-kind tokens → 404', async () => {
  const token = tokenOf(clickLinks[0]);
  const other = new TrackingLinks({ secret: 'another-postline-secret-0123456789', baseUrl: 'https://postline.test' });
  const cases = [
    token.slice(0, -1),
    token.slice(0, token.indexOf('.')),
    token.slice(0, token.indexOf('.') + 1),
    `${token}A`,
    `${token}.x`,
    '',
    'x',
    tokenOf(other.click(id, 'https://acme.test/offer?a=1&b=2', null)),
    tokenOf(pixel), // an open token is not a click token
    tokenOf(mail.listUnsubscribe.url),
  ];
  for (const bad of cases) {
    const res = await follow(app, `https://postline.test/t/c/${bad}`);
    assert.equal(res.statusCode, 404, bad);
    assert.equal(res.headers.location, undefined);
  }
});

test('open: the pixel is a no-store 1×1 GIF; the first fetch is a unique open, the next is not', async () => {
  const first = await follow(app, pixel, { headers: { 'user-agent': 'Thunderbird/140.0' } });
  assert.equal(first.statusCode, 200);
  assert.equal(first.headers['content-type'], 'image/gif');
  assert.equal(first.headers['cache-control'], 'no-store, max-age=0');
  assert.equal(first.rawPayload.subarray(0, 6).toString('latin1'), 'GIF89a');
  assert.equal(first.rawPayload.readUInt16LE(6), 1, 'width 1');
  assert.equal(first.rawPayload.readUInt16LE(8), 1, 'height 1');
  const second = await follow(app, pixel, { headers: { 'user-agent': 'Thunderbird/140.0' } });
  assert.equal(second.statusCode, 200);
  const opens = (await eventsOf(env, id)).filter((e) => e.type === 'open');
  assert.equal(opens.length, 2);
  assert.deepEqual(opens.map((o) => o.data.unique), [true, false]);
  assert.deepEqual(opens[0].data, { unique: true, machine: false, userAgent: 'Thunderbird/140.0' });
  assert.equal(opens[0].email, to);
});

test('open: simultaneous first fetches give exactly one unique open', async () => {
  const to2 = `race@${RECIPIENT_DOMAIN}`;
  const id2 = await sendAndDeliver(env, basicEmail({ to: to2 }));
  const px = (await receivedBy(env, to2)).images.find((s) => s.includes('/t/o/'))!;
  const all = await Promise.all(Array.from({ length: 12 }, () => follow(app, px)));
  assert.ok(all.every((r) => r.statusCode === 200));
  const opens = (await eventsOf(env, id2)).filter((e) => e.type === 'open');
  assert.equal(opens.length, 12);
  assert.equal(opens.filter((o) => o.data.unique === true).length, 1);
});

test('open: Apple Mail Privacy Protection and Gmail prefetch are machine opens; Google/Yahoo image proxies are proxied human opens', async () => {
  const cases: [string, Record<string, unknown>][] = [
    ['Mozilla/5.0', { machine: true, proxy: 'apple' }],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/42.0.2311.135 Safari/537.36 Edge/12.246 Mozilla/5.0', { machine: true, proxy: 'google' }],
    ['Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)', { machine: false, proxy: 'google' }],
    ['YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html', { machine: false, proxy: 'yahoo' }],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148', { machine: false }],
  ];
  for (const [ua] of cases) assert.equal((await follow(app, pixel, { headers: { 'user-agent': ua } })).statusCode, 200);
  const opens = (await eventsOf(env, id)).filter((e) => e.type === 'open').slice(-cases.length);
  cases.forEach(([ua, expected], i) => {
    const { machine, proxy, userAgent } = opens[i].data;
    assert.deepEqual({ machine, ...(proxy ? { proxy } : {}) }, expected, ua);
    assert.equal(userAgent, ua);
  });
});

test('open: tampered, foreign and sandbox tokens → 404 and no event', async () => {
  const before = (await eventsOf(env, id)).length;
  const token = tokenOf(pixel);
  for (const i of [0, 5, token.indexOf('.'), token.length - 1]) {
    const flipped = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
    assert.equal((await follow(app, `https://postline.test/t/o/${flipped}`)).statusCode, 404, `position ${i}`);
  }
  assert.equal((await follow(app, `https://postline.test/t/o/${signOpenToken('another-postline-secret-0123456789', id)}`)).statusCode, 404);
  const sandbox = await env.send(basicEmail(), env.acme.test);
  assert.equal(sandbox.statusCode, 202);
  assert.match(sandbox.json().id, /^sbx_/);
  assert.equal((await follow(app, `https://postline.test/t/o/${signOpenToken(key, sandbox.json().id)}`)).statusCode, 404, 'sandbox messages have no row');
  assert.equal((await eventsOf(env, id)).length, before);
});

test('database down: a signed click still redirects and the pixel still renders; unsubscribe answers 500, never a false success', async () => {
  const down = async () => {
    throw new Error('connection refused');
  };
  const broken = { query: down, connect: down, end: async () => {}, on: () => broken } as unknown as Pool;
  const { app: outage } = await bootApp({ pool: broken });
  const click = await follow(outage, clickLinks[0]);
  assert.equal(click.statusCode, 302);
  assert.equal(click.headers.location, 'https://acme.test/offer?a=1&b=2&q=caf%C3%A9#top');
  assert.equal((await follow(outage, pixel)).statusCode, 200);
  assert.equal((await follow(outage, `https://postline.test/t/c/${tokenOf(clickLinks[0]).slice(0, -1)}`)).statusCode, 404, 'still verified');
  const unsubscribe = await follow(outage, mail.listUnsubscribe.url, { method: 'POST' });
  assert.equal(unsubscribe.statusCode, 500);
});

test('batch statements: duplicates of one message in a batch give one unique open, the earliest; unknown messages insert nothing', async () => {
  const to3 = `batch@${RECIPIENT_DOMAIN}`;
  const id3 = await sendAndDeliver(env, basicEmail({ to: to3 }));
  const at = clock.now();
  const visit = (messageId: string, n: number) => ({ id: newId('evt'), messageId, data: { machine: false, userAgent: `ua ${n}` }, occurredAt: at });
  const opens = await insertOpenEvents(env.pool, [visit(id3, 1), visit('msg_0000', 2), visit(id3, 3), visit(id3, 4)]);
  assert.deepEqual(opens, [{ unique: true }, null, { unique: false }, { unique: false }]);
  const stored = (await eventsOf(env, id3)).filter((e) => e.type === 'open');
  assert.deepEqual(stored.map((e) => [e.data.userAgent, e.data.unique]), [['ua 1', true], ['ua 3', false], ['ua 4', false]]);
  assert.deepEqual(await insertOpenEvents(env.pool, [visit(id3, 5)]), [{ unique: false }]);

  const clicks = await insertClickEvents(env.pool, [{ ...visit(id3, 6), url: 'https://a.test/1' }, { ...visit('msg_0000', 7), url: 'https://a.test/2' }, { ...visit(id3, 8), url: 'https://a.test/3' }]);
  assert.deepEqual(clicks, [true, false, true]);
  assert.deepEqual((await eventsOf(env, id3)).filter((e) => e.type === 'click').map((e) => e.url), ['https://a.test/1', 'https://a.test/3']);
});

test('open: control characters in the user agent are dropped, and it is cut to 512 characters', async () => {
  const res = await follow(app, pixel, { headers: { 'user-agent': `Mail\tClient ${'x'.repeat(600)}` } });
  assert.equal(res.statusCode, 200);
  const ua = String((await eventsOf(env, id)).filter((e) => e.type === 'open').at(-1)!.data.userAgent);
  assert.equal(ua.length, 512);
  assert.match(ua, /^MailClient x+$/);
});
