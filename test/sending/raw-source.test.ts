import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.js';
import { captureMessage } from '../../src/db/queries/captured.js';
import { runCampaignStep } from '../../src/domain/campaigns/runner.js';
import { createTestAccount } from '../helpers/app.js';
import { basicEmail, RECIPIENT_DOMAIN, SENDER_DOMAIN, startMailEnv } from '../helpers/mail-env.js';
import { campaignBody, seedList } from '../campaigns/helpers.js';

/**
 * GET /api/v1/emails/{id}/raw (decision 0017): captured mail answers its kept bytes; any other
 * message is rebuilt through the delivery build path, so what it shows is what the MX got but
 * for the MIME boundaries and the signature values.
 */
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app, pool, mx } = env;
const raw = (id: string, headers: Record<string, string> = env.acme.live) => app.inject({ url: `/api/v1/emails/${encodeURIComponent(id)}/raw`, headers });
const unfold = (s: string) => s.replace(/\r\n[ \t]+/g, ' ');
const header = (source: string, name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(unfold(source.split('\r\n\r\n')[0]))?.[1];

test('raw source: an mx-delivered message is rebuilt with the Message-ID, Date, headers, parts and tracked links the MX received, DKIM-signed', async () => {
  const sent = await env.send(basicEmail({ to: `raw@${RECIPIENT_DOMAIN}`, cc: [`copy@${RECIPIENT_DOMAIN}`], tags: ['welcome'], headers: { 'X-Campaign-Ref': 'nov' } }));
  assert.equal(sent.statusCode, 202, sent.body);
  const id = sent.json().id as string;
  await env.deliverAll();
  const received = mx.messages.find((m) => m.envelope.to.includes(`raw@${RECIPIENT_DOMAIN}`))!;
  assert.ok(received, 'the MX got the message');

  const res = await raw(id);
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^message\/rfc822/);
  assert.equal(res.headers['postline-source'], 'rebuilt');
  const sentSource = received.raw.toString();
  for (const name of ['Message-ID', 'Date', 'From', 'To', 'Cc', 'Subject', 'X-Campaign-Ref', 'List-Unsubscribe', 'List-Unsubscribe-Post', 'MIME-Version']) {
    assert.equal(header(res.body, name), header(sentSource, name), name);
  }
  assert.equal(header(res.body, 'Message-ID'), `<${id}@${SENDER_DOMAIN}>`);
  const [rebuilt, original] = await Promise.all([simpleParser(res.rawPayload), simpleParser(received.raw)]);
  assert.equal(rebuilt.html, original.html, 'same html with the same tracked links, pixel and footer');
  assert.equal(rebuilt.text, original.text);
  const verdicts = await env.verifyDkim(res.rawPayload);
  assert.deepEqual(verdicts.map((v) => `${v.domain} ${v.result}`), [`${SENDER_DOMAIN} pass`, `${SENDER_DOMAIN} pass`]);

  // The cc recipient's copy: the send's headers, its own unsubscribe link.
  const detail = (await app.inject({ url: `/api/v1/emails/${id}`, headers: env.acme.live })).json();
  const ccId = detail.recipients.find((r: { email: string }) => r.email === `copy@${RECIPIENT_DOMAIN}`).id as string;
  const ccRes = await raw(ccId);
  const ccReceived = mx.messages.find((m) => m.envelope.to.includes(`copy@${RECIPIENT_DOMAIN}`))!;
  assert.equal(header(ccRes.body, 'List-Unsubscribe'), header(ccReceived.raw.toString(), 'List-Unsubscribe'));
  assert.notEqual(header(ccRes.body, 'List-Unsubscribe'), header(res.body, 'List-Unsubscribe'));
  assert.equal(header(ccRes.body, 'To'), `raw@${RECIPIENT_DOMAIN}`);
});

test('raw source: a campaign message is rendered for its subscriber as the engine rendered it', async () => {
  const listId = await seedList(app, pool, env.acme.live, env.acme.accountId, { count: 2, prefix: 'reader', domain: RECIPIENT_DOMAIN });
  const created = await app.inject({ method: 'POST', url: '/api/v1/campaigns', headers: env.acme.live, payload: campaignBody(listId) });
  assert.equal(created.statusCode, 201, created.body);
  const campaignId = created.json().id as string;
  const sendRes = await app.inject({ method: 'POST', url: `/api/v1/campaigns/${campaignId}/send`, headers: env.acme.live });
  assert.ok(sendRes.statusCode < 300, sendRes.body);
  await runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => 1000 });
  await env.deliverAll();
  const recipients = (await app.inject({ url: `/api/v1/campaigns/${campaignId}/recipients`, headers: env.acme.live })).json().data as { messageId: string; email: string }[];
  assert.equal(recipients.length, 2);
  for (const r of recipients) {
    const received = mx.messages.find((m) => m.envelope.to.includes(r.email))!;
    const res = await raw(r.messageId);
    assert.equal(res.statusCode, 200, res.body);
    const [rebuilt, original] = await Promise.all([simpleParser(res.rawPayload), simpleParser(received.raw)]);
    assert.equal(rebuilt.subject, original.subject);
    assert.match(String(rebuilt.subject), /^News for Reader \d$/);
    assert.equal(rebuilt.html, original.html);
    for (const name of ['List-Id', 'Precedence', 'Feedback-ID', 'Message-ID']) assert.equal(header(res.body, name), header(received.raw.toString(), name), name);
  }
});

test('raw source: captured mail answers the kept bytes exactly', async () => {
  const { id } = (await env.send(basicEmail({ to: `kept@${RECIPIENT_DOMAIN}` }))).json();
  const bytes = Buffer.from('Message-ID: <kept@acme.test>\r\nSubject: kept\r\n\r\nbody \u00e9 bytes\r\n');
  await captureMessage(pool, { id, accountId: env.acme.accountId, envelopeFrom: `b@${SENDER_DOMAIN}`, envelopeTo: `kept@${RECIPIENT_DOMAIN}`, subject: 'kept', raw: bytes, at: clock.now() });
  const res = await raw(id);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['postline-source'], 'captured');
  assert.deepEqual(res.rawPayload, bytes);
});

test("raw source: another account's id, an unknown id and hostile ids are 404 or 4xx; a test key reads as a live key does", async () => {
  const { id } = (await env.send(basicEmail({ to: `iso@${RECIPIENT_DOMAIN}` }))).json();
  const other = await createTestAccount(pool, 'Other');
  const foreign = await raw(id, other.live);
  assert.equal(foreign.statusCode, 404);
  assert.equal(foreign.json().code, 'not_found');
  assert.ok(!foreign.body.includes(RECIPIENT_DOMAIN));
  assert.equal((await raw('msg_00000000000000000000000000000000')).statusCode, 404);
  assert.equal((await raw('x'.repeat(65))).statusCode, 422);
  for (const hostile of ['msg_%00', 'msg_%ED%A0%80', 'msg_%F0']) {
    const res = await app.inject({ url: `/api/v1/emails/${hostile}/raw`, headers: env.acme.live });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(hostile)} → ${res.statusCode}`);
  }
  const viaTest = await raw(id, env.acme.test);
  assert.equal(viaTest.statusCode, 200);
  assert.equal(viaTest.headers['postline-source'], 'rebuilt');
  assert.equal(header(viaTest.body, 'Message-ID'), `<${id}@${SENDER_DOMAIN}>`);
  assert.equal((await app.inject({ url: `/api/v1/emails/${id}/raw` })).statusCode, 401);
});
