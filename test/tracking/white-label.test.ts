import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { basicEmail, RECIPIENT_DOMAIN, SENDER_DOMAIN, startMailEnv } from '../helpers/mail-env.js';
import { eventsOf, follow, receivedBy, sendAndDeliver } from './received.js';

// POSTLINE_BASE_URL is https://postline.test (mail-env), so the tracking host, the target of
// customers' CNAMEs, is postline.test.
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app, dns } = env;
const TRACK = `track.${SENDER_DOMAIN}`;

async function checkTracking(): Promise<{ host: string; status: string; checkedAt: string | null }> {
  const res = await app.inject({ method: 'POST', url: `/api/v1/domains/${env.domainId}/tracking/verify`, headers: env.acme.live });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().tracking;
}

/**
 * Sends and delivers with a fresh delivery engine, as a newly started worker would: an engine
 * caches a domain's signing info (and so its tracking host) for up to a minute.
 */
async function deliveredTo(local: string) {
  const to = `${local}@${RECIPIENT_DOMAIN}`;
  const id = await sendAndDeliver(env, basicEmail({ to }), env.newEngine());
  const mail = await receivedBy(env, to);
  return {
    id,
    mail,
    click: mail.hrefs.find((h) => h.includes('/t/c/'))!,
    pixel: mail.images.find((s) => s.includes('/t/o/'))!,
    footer: mail.hrefs.find((h) => h.includes('/u/'))!,
  };
}

test('white-label: without a CNAME, links, pixel and footer use the base URL', async () => {
  assert.equal((await checkTracking()).status, 'failed');
  const m = await deliveredTo('before');
  assert.match(m.click, /^https:\/\/postline\.test\/t\/c\//);
  assert.match(m.pixel, /^https:\/\/postline\.test\/t\/o\//);
  assert.match(m.footer, /^https:\/\/postline\.test\/u\//);
});

test('white-label: CNAME confirmed → new messages use http://track.<domain> in both parts, and those links work on that host', async () => {
  dns.setRecords(TRACK, 'CNAME', ['postline.test']);
  clock.advance(60_000);
  assert.deepEqual(await checkTracking(), { host: TRACK, target: 'postline.test', status: 'verified', checkedAt: clock.now().toISOString() });

  const m = await deliveredTo('white');
  assert.match(m.click, /^http:\/\/track\.acme\.test\/t\/c\//);
  assert.match(m.pixel, /^http:\/\/track\.acme\.test\/t\/o\//);
  assert.match(m.footer, /^http:\/\/track\.acme\.test\/u\//);
  assert.ok(m.mail.text.includes(m.footer), 'the text part carries the white-label unsubscribe URL');
  assert.ok(!m.mail.html.includes('https://postline.test/t/'), 'no default-host tracking left in the HTML');
  // RFC 8058 requires an https one-click URL, and no certificate exists for track.<domain>.
  assert.match(m.mail.listUnsubscribe.url, /^https:\/\/postline\.test\/u\//);
  assert.ok((await env.verifyDkim(m.mail.raw)).every((v) => v.result === 'pass'));

  const click = await follow(app, m.click);
  assert.equal(click.statusCode, 302);
  assert.equal(click.headers.location, 'https://acme.test/offer?a=1&b=2');
  const open = await follow(app, m.pixel);
  assert.equal(open.statusCode, 200);
  assert.equal(open.headers['content-type'], 'image/gif');
  const page = await follow(app, m.footer);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<form method="post">/);
  assert.equal((await follow(app, m.footer, { method: 'POST' })).statusCode, 200);
  assert.deepEqual((await eventsOf(env, m.id)).map((e) => e.type), ['sent', 'delivered', 'click', 'open', 'unsubscribe']);
});

test('white-label: CNAME removed → the re-check fails and new messages use the base URL again', async () => {
  dns.deleteRecords(TRACK);
  clock.advance(60_000);
  const tracking = await checkTracking();
  assert.equal(tracking.status, 'failed');
  assert.equal(tracking.checkedAt, clock.now().toISOString());
  const m = await deliveredTo('after');
  assert.match(m.click, /^https:\/\/postline\.test\/t\/c\//);
  assert.match(m.pixel, /^https:\/\/postline\.test\/t\/o\//);
  assert.match(m.footer, /^https:\/\/postline\.test\/u\//);
  assert.equal((await follow(app, m.click)).statusCode, 302);
});
