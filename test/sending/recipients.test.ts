import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.js';
import { createTestAccount } from '../helpers/app.js';
import { basicEmail, RECIPIENT_DOMAIN, SENDER_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

/** Every envelope recipient (to, cc, bcc) is delivered and reported on its own. */

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app, pool, mx } = env;
const rules = new Map<string, 'accept' | 'reject'>();
mx.setRule((rcpt) => rules.get(rcpt.toLowerCase()) ?? 'accept');

const at = (local: string) => `${local}@${RECIPIENT_DOMAIN}`;
const headerBlock = (raw: Buffer) => raw.toString().split('\r\n\r\n')[0];

async function detail(id: string, headers = env.acme.live) {
  return app.inject({ url: `/api/v1/emails/${id}`, headers });
}

function receivedBy(email: string) {
  return mx.messages.filter((m) => m.envelope.to.map((t) => t.toLowerCase()).includes(email.toLowerCase()));
}

test('cc and bcc: each recipient gets its own copy, headers name To and Cc only, never Bcc', async () => {
  const res = await env.send(basicEmail({ to: at('ada'), cc: [at('bob'), at('carol')], bcc: [at('dave')] }));
  assert.equal(res.statusCode, 202);
  const { id } = res.json();
  assert.equal(await env.deliverAll(), 4);
  const copies = [at('ada'), at('bob'), at('carol'), at('dave')].map((r) => {
    const got = receivedBy(r);
    assert.equal(got.length, 1, `${r} got ${got.length} copies`);
    assert.deepEqual(got[0].envelope.to, [r], 'one RCPT per copy');
    return got[0];
  });
  const messageIds = new Set<string>();
  for (const copy of copies) {
    const headers = headerBlock(copy.raw);
    assert.ok(!/dave/i.test(headers), 'the bcc address appears in no header of any copy');
    assert.ok(!/^bcc:/im.test(headers));
    const parsed = await simpleParser(copy.raw);
    assert.equal(parsed.to && !Array.isArray(parsed.to) ? parsed.to.text : '', at('ada'));
    assert.deepEqual((parsed.cc && !Array.isArray(parsed.cc) ? parsed.cc.value : []).map((a) => a.address), [at('bob'), at('carol')]);
    messageIds.add(String(parsed.messageId));
    const verdicts = await env.verifyDkim(copy.raw);
    assert.deepEqual(verdicts.map((v) => v.result), ['pass', 'pass']);
  }
  assert.deepEqual([...messageIds], [`<${id}@${SENDER_DOMAIN}>`], 'one Message-ID for the send');
  // Each copy has its own return path and its own unsubscribe link.
  assert.equal(new Set(copies.map((c) => c.envelope.from)).size, 4);
  const unsub = copies.map((c) => /List-Unsubscribe: <([^>]+)>/.exec(c.raw.toString().replace(/\r\n[ \t]+/g, ' '))![1]);
  assert.equal(new Set(unsub).size, 4);

  const body = (await detail(id)).json();
  assert.equal(body.id, id);
  assert.equal(body.groupId, id);
  assert.deepEqual(body.bcc, [at('dave')]);
  assert.deepEqual(body.recipients.map((r: { email: string; type: string; status: string }) => [r.email, r.type, r.status]), [
    [at('ada'), 'to', 'delivered'],
    [at('bob'), 'cc', 'delivered'],
    [at('carol'), 'cc', 'delivered'],
    [at('dave'), 'bcc', 'delivered'],
  ]);
  const delivered = body.events.filter((e: { type: string }) => e.type === 'delivered').map((e: { email: string }) => e.email).sort();
  assert.deepEqual(delivered, [at('ada'), at('bob'), at('carol'), at('dave')]);
  assert.equal(body.events.filter((e: { type: string }) => e.type === 'sent').length, 4);
  // A recipient's own id (events and webhooks carry it) shows the same send.
  const bobId = body.recipients[1].id;
  assert.notEqual(bobId, id);
  const viaBob = (await detail(bobId)).json();
  assert.equal(viaBob.id, id);
  assert.equal(viaBob.recipients.length, 4);
  assert.match(String(viaBob.html), /Hi Ada/);
});

test('cc and bcc: a bounce is per recipient and suppresses only that address; the next send skips it', async () => {
  rules.set(at('gone'), 'reject');
  const { id } = (await env.send(basicEmail({ to: at('erin'), bcc: [at('gone')] }))).json();
  await env.deliverAll();
  const body = (await detail(id)).json();
  assert.deepEqual(body.recipients.map((r: { status: string }) => r.status), ['delivered', 'bounced']);
  assert.equal(body.status, 'delivered');
  const bounce = body.events.find((e: { type: string }) => e.type === 'hard_bounce');
  assert.equal(bounce.email, at('gone'));
  assert.equal(bounce.messageId, body.recipients[1].id);
  const check = (email: string) => app.inject({ url: `/api/v1/suppression?email=${email}`, headers: env.acme.live }).then((r) => r.json().suppressed);
  assert.equal(await check(at('gone')), true);
  assert.equal(await check(at('erin')), false);

  const before = mx.messages.length;
  const next = await env.send(basicEmail({ to: at('frank'), cc: [at('gone')] }));
  assert.equal(next.statusCode, 202);
  await env.deliverAll();
  assert.equal(mx.messages.length - before, 1, 'the suppressed cc is not sent to');
  assert.equal(receivedBy(at('gone')).length, 0);
  const nb = (await detail(next.json().id)).json();
  assert.deepEqual(nb.recipients.map((r: { email: string; status: string; nextAttemptAt: string | null }) => [r.email, r.status, r.nextAttemptAt]), [
    [at('frank'), 'delivered', null],
    [at('gone'), 'suppressed', null],
  ]);
  assert.ok(!nb.events.some((e: { email: string }) => e.email === at('gone')), 'no sent event for a suppressed recipient');
});

test('cc and bcc: a suppressed `to` with a deliverable cc is sent to the cc; all suppressed is 422 recipient_suppressed', async () => {
  await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: { ...env.acme.live, 'content-type': 'application/json' }, payload: { email: at('muted') } });
  const ok = await env.send(basicEmail({ to: at('muted'), cc: [at('gina')] }));
  assert.equal(ok.statusCode, 202, ok.body);
  await env.deliverAll();
  assert.equal(receivedBy(at('muted')).length, 0);
  assert.equal(receivedBy(at('gina')).length, 1);
  const body = (await detail(ok.json().id)).json();
  assert.equal(body.status, 'suppressed');
  assert.deepEqual(body.recipients.map((r: { status: string }) => r.status), ['suppressed', 'delivered']);

  const refused = await env.send(basicEmail({ to: at('muted'), bcc: [at('gone')] }));
  assert.equal(refused.statusCode, 422);
  assert.equal(refused.json().code, 'recipient_suppressed');
  assert.deepEqual(refused.json().errors.map((e: { field: string }) => e.field), ['to', 'bcc[0]']);
});

test('cc and bcc: an address named twice (any case, any field) gets one copy', async () => {
  const { id } = (await env.send(basicEmail({ to: at('hal'), cc: [at('HAL'), at('ivy')], bcc: [at('ivy'), at('Hal')] }))).json();
  await env.deliverAll();
  assert.equal(receivedBy(at('hal')).length, 1);
  assert.equal(receivedBy(at('ivy')).length, 1);
  const body = (await detail(id)).json();
  assert.deepEqual(body.recipients.map((r: { email: string; type: string }) => [r.email, r.type]), [[at('hal'), 'to'], [at('ivy'), 'cc']]);
});

test('cc and bcc: a copy carries its own {{ unsubscribe_url }}, and using it unsubscribes only that recipient', async () => {
  const { id } = (await env.send(basicEmail({
    to: at('jan'),
    cc: [at('kim')],
    html: '<p>Hi. <a href="{{ unsubscribe_url }}">Leave</a></p>',
    text: 'Leave: {{ unsubscribe_url }}',
  }))).json();
  await env.deliverAll();
  const links = async (email: string) => {
    const parsed = await simpleParser(receivedBy(email)[0].raw);
    const inHtml = [...String(parsed.html).matchAll(/https:\/\/postline\.test\/u\/[^\s"<>\]]+/g)].map((m) => m[0]);
    const inText = [...String(parsed.text).matchAll(/https:\/\/postline\.test\/u\/[^\s"<>\]]+/g)].map((m) => m[0]);
    return new Set([...inHtml, ...inText]);
  };
  const jan = await links(at('jan'));
  const kim = await links(at('kim'));
  assert.equal(jan.size, 1);
  assert.equal(kim.size, 1);
  assert.notDeepEqual([...jan], [...kim]);
  const res = await app.inject({ method: 'POST', url: new URL([...kim][0]).pathname, payload: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.ok(res.statusCode < 300, `${res.statusCode} ${res.body}`);
  const check = (email: string) => app.inject({ url: `/api/v1/suppression?email=${email}`, headers: env.acme.live }).then((r) => r.json().suppressed);
  assert.equal(await check(at('kim')), true);
  assert.equal(await check(at('jan')), false);
  const body = (await detail(id)).json();
  assert.deepEqual(body.events.filter((e: { type: string }) => e.type === 'unsubscribe').map((e: { email: string }) => e.email), [at('kim')]);
});

test('cc and bcc: the list shows one entry per send; ?to= finds a cc recipient; quota counts every recipient', async () => {
  const { id } = (await env.send(basicEmail({ to: at('lea'), cc: [at('max')], subject: 'listed' }))).json();
  const list = (await app.inject({ url: '/api/v1/emails?limit=100', headers: env.acme.live })).json();
  assert.equal(list.data.filter((m: { subject: string }) => m.subject === 'listed').length, 1);
  assert.equal(list.data.find((m: { subject: string }) => m.subject === 'listed').id, id);
  const byCc = (await app.inject({ url: `/api/v1/emails?to=${at('max')}`, headers: env.acme.live })).json();
  assert.equal(byCc.data.length, 1);
  assert.equal(byCc.data[0].to, at('max'));

  const small = await createTestAccount(pool, 'Small', 3);
  const { createDomain, dnsTargetsOf, forceVerifyDomain } = await import('../../src/domain/domains/domains.js');
  const d = await createDomain(pool, { accountId: small.accountId, name: SENDER_DOMAIN, now: clock.now() }, { secret: env.config.secret, targets: dnsTargetsOf(env.config) });
  await forceVerifyDomain(pool, d.id, clock.now());
  const four = await env.send(basicEmail({ to: at('n1'), cc: [at('n2'), at('n3')], bcc: [at('n4')] }), small.live);
  assert.equal(four.statusCode, 429, 'four recipients do not fit a quota of three');
  const three = await env.send(basicEmail({ to: at('n1'), cc: [at('n2')], bcc: [at('n3')] }), small.live);
  assert.equal(three.statusCode, 202);
  const more = await env.send(basicEmail({ to: at('n5') }), small.live);
  assert.equal(more.statusCode, 429);

  // Another account sees none of it, by the send's id or a recipient's.
  const bob = (await detail(id)).json().recipients[1].id;
  for (const x of [id, bob]) assert.equal((await detail(x, small.live)).statusCode, 404);
});

test('cc and bcc: a test key validates cc/bcc like a live key and stores nothing', async () => {
  const bad = await env.send(basicEmail({ cc: ['not an address'] }), env.acme.test);
  assert.equal(bad.statusCode, 422);
  const liveBad = await env.send(basicEmail({ cc: ['not an address'] }));
  assert.equal(liveBad.statusCode, 422);
  assert.equal(bad.json().code, liveBad.json().code);
  const before = (await pool.query('SELECT count(*)::int AS n FROM messages')).rows[0].n;
  const ok = await env.send(basicEmail({ cc: [at('x1')], bcc: [at('x2')] }), env.acme.test);
  assert.equal(ok.statusCode, 202);
  assert.equal(ok.json().sandbox, true);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM messages')).rows[0].n, before);
});

test('cc and bcc: at and past the 50-address limit of each; NUL in an address is 4xx', async () => {
  const many = (n: number, p: string) => Array.from({ length: n }, (_, i) => at(`${p}${i}`));
  assert.equal((await env.send(basicEmail({ cc: many(50, 'c'), bcc: many(50, 'b') }), env.acme.test)).statusCode, 202);
  assert.equal((await env.send(basicEmail({ cc: many(51, 'c') }), env.acme.test)).statusCode, 422);
  assert.equal((await env.send(basicEmail({ bcc: many(51, 'b') }), env.acme.test)).statusCode, 422);
  const nul = await env.send(basicEmail({ bcc: [`a\u0000b@${RECIPIENT_DOMAIN}`] }));
  assert.ok(nul.statusCode >= 400 && nul.statusCode < 500, String(nul.statusCode));
});

test('text part: derived from the content once, each copy\'s text carries its own tracked links and none of the originals', async () => {
  const html = '<p>See <a href="https://acme.test/a?x=1&amp;y=2">https://acme.test/a?x=1&amp;y=2</a> and <a href="https://acme.test/a">the short one</a>, ' +
    'or <a data-postline-notrack href="https://acme.test/plain">untracked</a>.</p>';
  await env.send(basicEmail({ to: at('tx1'), cc: [at('tx2')], html }));
  await env.deliverAll();
  const texts: string[] = [];
  for (const r of [at('tx1'), at('tx2')]) {
    const parsed = await simpleParser(receivedBy(r)[0].raw);
    const text = String(parsed.text);
    assert.ok(!text.includes('https://acme.test/a'), text);
    assert.ok(text.includes('https://acme.test/plain'), 'a notrack link stays as written');
    const clicks = [...text.matchAll(/https:\/\/postline\.test\/t\/c\/[^\s\]]+/g)].map((m) => m[0]);
    assert.equal(clicks.length, 2, text);
    // The same links as the HTML part of that copy.
    for (const c of clicks) assert.ok(String(parsed.html).includes(c), c);
    assert.match(text, /https:\/\/postline\.test\/u\//);
    texts.push(clicks.join(' '));
  }
  assert.notEqual(texts[0], texts[1], 'each copy has its own click tokens');
});
