import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.js';
import { runCampaignStep } from '../../src/domain/campaigns/runner.js';
import { fanOutBatch, planBatch, runFanOut, splitFanOut, type PartState } from '../../src/domain/campaigns/fanout.js';
import { withTransaction } from '../../src/db/pool.js';
import { claimFanOutPart } from '../../src/db/queries/campaigns/fanout.js';
import { claimDueMessages } from '../../src/delivery/queue.js';
import { compileTemplate } from '../../src/templates/index.js';
import { TrackingLinks } from '../../src/domain/tracking/links.js';
import { RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';
import { api, campaignBody, seedList, type Json } from './helpers.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app, pool, acme, mx } = env;
const live = api(app, acme.live);
const links = new TrackingLinks(env.config);
const runner = () => runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => null });
const body = (listId: string, over: Record<string, unknown> = {}) => campaignBody(listId, { from: { email: 'news@acme.test', name: 'Acme' }, ...over });
const at = (local: string) => `${local}@${RECIPIENT_DOMAIN}`;

async function list(name: string): Promise<string> {
  return (await live.post('/api/v1/lists', { name })).body.id;
}
async function subscriber(email: string, lists: string[], extra: Record<string, unknown> = {}): Promise<Json> {
  const r = await live.post('/api/v1/subscribers', { email, ...(lists[0] ? { list: lists[0] } : {}), ...extra });
  assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
  for (const l of lists.slice(1)) await live.patch(`/api/v1/subscribers/${r.body.id}`, { addLists: [l] });
  return r.body;
}
async function report(id: string): Promise<Json> {
  const r = await live.get(`/api/v1/campaigns/${id}`);
  assert.equal(r.status, 200);
  return r.body;
}
async function sendAndFanOut(b: Record<string, unknown>): Promise<string> {
  const c = (await live.post('/api/v1/campaigns', b)).body;
  assert.ok(c.id, JSON.stringify(c));
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/send`)).status, 202);
  await runner();
  return c.id;
}
const pathOf = (url: string) => new URL(url).pathname;

test('fan-out: active members once each, minus excluded, skips counted by reason; content stored once and rendered per recipient at delivery', async () => {
  const news = await list('News');
  const promo = await list('Promo');
  const excluded = await list('Excluded');
  await subscriber(at('ada'), [news], { name: 'Ada', attributes: { plan: 'pro' } });
  await subscriber(at('bob'), [news]);
  await subscriber(at('cy'), [news], { status: 'unsubscribed' });
  await subscriber(at('dee'), [news]);
  await live.post('/api/v1/suppression', { email: at('dee'), reason: 'manual' });
  await subscriber(at('eve'), [news, promo]);
  await subscriber(at('fay'), [news, excluded]);
  await subscriber(at('gus'), [promo]);
  await subscriber(at('hal'), [promo]);
  await live.post('/api/v1/suppression', { email: at('hal'), reason: 'hard_bounce' });
  await subscriber(at('ivy'), [promo], { status: 'unconfirmed' });

  const id = await sendAndFanOut(body(news, { audience: { lists: [news, promo], excludeLists: [excluded] }, tags: ['monthly'] }));
  const { rows } = await pool.query(
    'SELECT to_email, html, text, merge_data, subject, tags FROM messages WHERE campaign_id = $1 ORDER BY to_email',
    [id],
  );
  assert.deepEqual(rows.map((r) => r.to_email), [at('ada'), at('bob'), at('eve'), at('gus')]);
  assert.ok(rows.every((r) => r.html === null && r.text === null), 'no copy of the content per message');
  assert.deepEqual(rows[0].merge_data.subscriber.attributes, { plan: 'pro' });
  assert.equal(rows[0].subject, 'News for Ada');
  assert.equal(rows[1].subject, 'News for you');
  assert.deepEqual(rows[0].tags, ['monthly']);
  let r = await report(id);
  assert.deepEqual(r.counts.skipped, { suppressed: 1, unsubscribed: 1, bounced: 1, complained: 0, duplicate: 1 });
  assert.equal(r.progress.recipients, 4);
  assert.equal(r.progress.queued, 4);
  assert.equal(r.counts.sent, 4);
  // The fan-out writes its own `sent` counters (migration 019): the same as the trigger's, in every scope.
  for (const q of ['', '?tag=monthly', `?campaignId=${id}`]) assert.equal((await live.get(`/api/v1/stats${q}`)).body.counts.sent, 4, q);
  const rollups = await pool.query(
    `SELECT scope, sum(sent)::int AS sent FROM stats_daily WHERE account_id = $1 GROUP BY scope ORDER BY scope`,
    [acme.accountId],
  );
  assert.deepEqual(rollups.rows, [{ scope: '', sent: 4 }, { scope: `c:${id}`, sent: 4 }, { scope: 't:monthly', sent: 4 }]);

  assert.equal(await env.deliverAll(), 4);
  assert.equal(mx.messages.length, 4);
  const ada = mx.messages.find((m) => m.envelope.to.includes(at('ada')))!;
  const parsed = await simpleParser(ada.raw);
  const html = String(parsed.html);
  assert.match(html, /Hi Ada \(ada@example\.net\), plan pro\. Cheers/);
  assert.match(html, /\/u\//, 'unsubscribe footer');
  assert.ok(!html.includes('https://acme.test/a"'), 'links are click-tracked');
  assert.equal(parsed.subject, 'News for Ada');
  assert.equal(parsed.headers.get('precedence'), 'bulk');
  assert.match(ada.raw.toString(), new RegExp(`^List-Id: <${id}\\.campaigns\\.acme\\.test>`, 'mi'));
  assert.match(ada.raw.toString(), /^Feedback-ID:\s+cmp_[0-9a-f]{32}:acc_[0-9a-f]{32}:campaign:postline/mi);
  assert.match(ada.raw.toString(), /^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m);
  assert.ok((await env.verifyDkim(ada.raw)).every((v) => v.result === 'pass'));
  const bob = String((await simpleParser(mx.messages.find((m) => m.envelope.to.includes(at('bob')))!.raw)).html);
  assert.match(bob, /Hi there \(bob@example\.net\), plan free\./);

  await runner();
  r = await report(id);
  assert.equal(r.status, 'sent');
  assert.equal(r.counts.delivered, 4);
  assert.equal(r.progress.remaining, 0);
  assert.equal(r.progress.percent, 100);
  assert.equal(r.progress.finishedAt, clock.now().toISOString());
  assert.deepEqual(r.timeline, [{ hour: '2026-11-20T10:00:00.000Z', delivered: 4, opens: 0, clicks: 0, bounces: 0 }]);
  assert.equal(r.rates.delivery, 1);

  // engagement: opens, clicks, unsubscribes count toward the campaign
  const msgs = (await live.get(`/api/v1/campaigns/${id}/recipients?order=asc`)).body.data as Json[];
  assert.equal(msgs.length, 4);
  assert.ok(msgs.every((m) => m.status === 'delivered'));
  const adaMsg = msgs.find((m) => m.email === at('ada')).messageId;
  const bobMsg = msgs.find((m) => m.email === at('bob')).messageId;
  for (let i = 0; i < 2; i++) assert.equal((await app.inject({ url: pathOf(links.open(adaMsg, null)) })).statusCode, 200);
  for (let i = 0; i < 2; i++) assert.equal((await app.inject({ url: pathOf(links.click(adaMsg, 'https://acme.test/a', null)) })).statusCode, 302);
  await app.inject({ url: pathOf(links.click(adaMsg, 'https://acme.test/b', null)) });
  await app.inject({ url: pathOf(links.click(bobMsg, 'https://acme.test/a', null)) });
  assert.ok([200, 204].includes((await app.inject({ method: 'POST', url: pathOf(links.oneClick(bobMsg)), payload: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).statusCode));
  r = await report(id);
  assert.equal(r.counts.opens, 2);
  assert.equal(r.counts.uniqueOpens, 1);
  assert.equal(r.counts.clicks, 4);
  assert.equal(r.counts.uniqueClicks, 2);
  assert.equal(r.counts.unsubscribes, 1);
  assert.deepEqual(r.topLinks, [{ url: 'https://acme.test/a', clicks: 3, uniqueClicks: 2 }, { url: 'https://acme.test/b', clicks: 1, uniqueClicks: 1 }]);
  assert.equal(r.rates.open, 0.25);
  assert.equal(r.rates.click, 0.5);
  assert.equal(r.rates.clickToOpen, 2);
  const opened = (await live.get(`/api/v1/campaigns/${id}/recipients?order=asc`)).body.data.find((m: Json) => m.email === at('ada'));
  assert.ok(opened.openedAt && opened.clickedAt);

  // events of campaign messages carry campaignId
  const email = (await live.get(`/api/v1/emails/${adaMsg}`)).body;
  assert.ok(email.events.length >= 4);
  assert.ok(email.events.every((e: Json) => e.campaignId === id), JSON.stringify(email.events));
  assert.equal((await live.get(`/api/v1/campaigns/${id}/recipients?status=queued`)).body.data.length, 0);
});

test('throttle spaces delivery; pause holds unsent messages at once; resume releases them', async () => {
  mx.messages.length = 0;
  const l = await seedList(app, pool, acme.live, acme.accountId, { count: 4, prefix: 'thr', domain: RECIPIENT_DOMAIN, name: 'Throttled' });
  const id = await sendAndFanOut(body(l, { throttle: 60 }));
  const { rows } = await pool.query('SELECT next_attempt_at FROM messages WHERE campaign_id = $1 ORDER BY next_attempt_at', [id]);
  assert.deepEqual(rows.map((x) => x.next_attempt_at.getTime() - clock.now().getTime()), [0, 1000, 2000, 3000]);
  assert.equal(await env.deliverAll(), 1);
  assert.equal((await live.post(`/api/v1/campaigns/${id}/pause`)).body.status, 'paused');
  clock.advance(10_000);
  assert.equal(await env.deliverAll(), 0, 'nothing leaves while paused');
  assert.equal((await live.get(`/api/v1/campaigns/${id}/recipients?status=held`)).body.data.length, 3);
  assert.equal((await report(id)).pauseReason, 'paused by request');
  assert.equal((await live.post(`/api/v1/campaigns/${id}/resume`)).body.status, 'sending');
  assert.equal(await env.deliverAll(), 1, 'throttled again from the resume on');
  clock.advance(2000);
  assert.equal(await env.deliverAll(), 2);
  await runner();
  assert.equal((await report(id)).status, 'sent');
  assert.equal(mx.messages.length, 4);
});

test('cancel removes unsent messages and counts them as cancelled', async () => {
  const l = await seedList(app, pool, acme.live, acme.accountId, { count: 5, prefix: 'can', domain: RECIPIENT_DOMAIN, name: 'Cancelled' });
  const id = await sendAndFanOut(body(l, { throttle: 60 }));
  assert.equal(await env.deliverAll(), 1);
  assert.equal((await live.post(`/api/v1/campaigns/${id}/cancel`)).body.status, 'cancelled');
  clock.advance(60_000);
  assert.equal(await env.deliverAll(), 0);
  const r = await report(id);
  assert.equal(r.counts.cancelled, 4);
  assert.equal(r.counts.delivered, 1);
  assert.equal(r.progress.remaining, 0);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1', [id])).rows[0].n, 1);
});

test('a message in flight at pause or cancel that is then deferred is held (resume sends it) or removed and counted as cancelled', async () => {
  const inFlight = async (prefix: string, action: 'pause' | 'cancel') => {
    const l = await seedList(app, pool, acme.live, acme.accountId, { count: 1, prefix, domain: RECIPIENT_DOMAIN, name: prefix });
    const id = await sendAndFanOut(body(l));
    // The MX answers the RCPT only once the campaign was paused/cancelled: the message is 'sending' meanwhile.
    mx.setRule(async (rcpt) => {
      if (!rcpt.startsWith(prefix)) return 'accept';
      assert.equal((await live.post(`/api/v1/campaigns/${id}/${action}`)).status, 200);
      return 'defer';
    });
    assert.equal(await env.deliverAll(), 1, 'one attempt, deferred');
    mx.setRule(() => 'accept');
    return id;
  };
  const paused = await inFlight('stray-p', 'pause');
  const held = await pool.query('SELECT status FROM messages WHERE campaign_id = $1', [paused]);
  assert.deepEqual(held.rows.map((r) => r.status), ['held']);
  assert.equal((await live.get(`/api/v1/campaigns/${paused}/recipients?status=held`)).body.data.length, 1);
  assert.deepEqual((await live.get('/api/v1/emails?status=held')).body.data.map((m: Json) => [m.to, m.status]), [[at('stray-p1'), 'held']], 'GET /emails filters by held');
  clock.advance(3_600_000);
  assert.equal(await env.deliverAll(), 0, 'not retried while paused');
  assert.equal((await live.post(`/api/v1/campaigns/${paused}/resume`)).body.status, 'sending');
  mx.messages.length = 0;
  assert.equal(await env.deliverAll(), 1);
  assert.equal(mx.messages.length, 1, 'delivered after the resume');

  const cancelled = await inFlight('stray-c', 'cancel');
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1', [cancelled])).rows[0].n, 0);
  clock.advance(3_600_000);
  assert.equal(await env.deliverAll(), 0, 'never retried after the cancel');
  const r = await report(cancelled);
  assert.equal(r.counts.cancelled, 1);
  assert.equal(r.counts.deferred, 1);
  assert.equal(r.progress.remaining, 0);
});

test('a message whose worker died while its campaign was paused or cancelled is not reclaimed: held (resume sends it) or removed and counted', async () => {
  // A worker claims the message and dies: the row stays 'sending' under its lease.
  const orphan = async (prefix: string, action: 'pause' | 'cancel') => {
    const l = await seedList(app, pool, acme.live, acme.accountId, { count: 1, prefix, domain: RECIPIENT_DOMAIN, name: prefix });
    const id = await sendAndFanOut(body(l));
    assert.equal((await claimDueMessages(pool, 'gone-host:1:dead', clock.now(), 10, 60_000)).length, 1);
    assert.equal((await live.post(`/api/v1/campaigns/${id}/${action}`)).status, 200);
    clock.advance(61_000); // the lease has expired
    mx.messages.length = 0;
    assert.equal(await env.deliverAll(), 0, 'not reclaimed');
    assert.equal(mx.messages.length, 0);
    return id;
  };
  const paused = await orphan('orphan-p', 'pause');
  const held = await pool.query('SELECT status FROM messages WHERE campaign_id = $1', [paused]);
  assert.deepEqual(held.rows.map((r) => r.status), ['held']);
  clock.advance(3_600_000);
  assert.equal(await env.deliverAll(), 0, 'still held');
  assert.equal((await live.post(`/api/v1/campaigns/${paused}/resume`)).body.status, 'sending');
  assert.equal(await env.deliverAll(), 1);
  assert.equal(mx.messages.length, 1, 'delivered after the resume');

  const cancelled = await orphan('orphan-c', 'cancel');
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1', [cancelled])).rows[0].n, 0);
  const r = await report(cancelled);
  assert.equal(r.counts.cancelled, 1);
  assert.equal(r.progress.remaining, 0);
});

test('a pause committed while a fan-out batch is being written rolls that batch back; the resume fans out the rest, each recipient once', async () => {
  const l = await seedList(app, pool, acme.live, acme.accountId, { count: 6, prefix: 'race', domain: RECIPIENT_DOMAIN, name: 'Race' });
  const c = (await live.post('/api/v1/campaigns', body(l))).body;
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/send`)).status, 202);
  let batches = 0;
  const quotaOf = async () => {
    // Asked in the middle of each batch's transaction: the pause commits while the second is written.
    if (++batches === 2) assert.equal((await live.post(`/api/v1/campaigns/${c.id}/pause`)).status, 200);
    return null;
  };
  assert.equal(await runFanOut({ pool, now: () => clock.now(), quotaOf, batchSize: 2 }), 2, 'the first batch only');
  const held = await pool.query('SELECT status FROM messages WHERE campaign_id = $1', [c.id]);
  assert.deepEqual(held.rows.map((r) => r.status), ['held', 'held']);
  assert.equal((await report(c.id)).progress.queued, 2);
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/resume`)).body.status, 'sending');
  assert.equal((await runner()).messages, 4, 'resumed after the first batch');
  const { rows } = await pool.query('SELECT count(DISTINCT subscriber_id)::int AS n, count(*)::int AS m FROM messages WHERE campaign_id = $1', [c.id]);
  assert.deepEqual(rows[0], { n: 6, m: 6 });
  assert.equal((await report(c.id)).progress.queued, 6);
});

test('the runner says when a fan-out is under way and when it has none left (the worker lowers its delivery meanwhile)', async () => {
  const l = await seedList(app, pool, acme.live, acme.accountId, { count: 3, prefix: 'busy', domain: RECIPIENT_DOMAIN, name: 'Busy' });
  const c = (await live.post('/api/v1/campaigns', body(l))).body;
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/send`)).status, 202);
  const calls: boolean[] = [];
  const step = () => runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => null, onFanOut: (running) => void calls.push(running) });
  assert.equal((await step()).messages, 3);
  assert.deepEqual(calls, [true, false]);
  calls.length = 0;
  await step();
  assert.deepEqual(calls, [false], 'nothing to fan out');
});

test('pipelined fan-out: a batch read ahead is used only when it starts at the committed checkpoint', async () => {
  const l = await seedList(app, pool, acme.live, acme.accountId, { count: 5, prefix: 'ahead', domain: RECIPIENT_DOMAIN, name: 'Ahead' });
  const c = (await live.post('/api/v1/campaigns', body(l))).body;
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/send`)).status, 202);
  const deps = { pool, now: () => clock.now(), quotaOf: async () => null, batchSize: 2 };
  assert.equal(await splitFanOut(deps), true);
  const claimed = (await claimFanOutPart(pool, 'w-ahead', clock.now(), 60_000))!;
  assert.deepEqual([claimed.campaign_id, claimed.part, claimed.upto_id], [c.id, 0, null], 'a small audience is one part');
  const row = (await pool.query('SELECT * FROM campaigns WHERE id = $1', [c.id])).rows[0];
  const part: PartState = { part: 0, upto: null, after: claimed.last_subscriber_id, throttleNextAt: null };
  const subject = compileTemplate(row.subject ?? '');
  const ids = async () => (await pool.query('SELECT id FROM messages WHERE campaign_id = $1 ORDER BY subscriber_id', [c.id])).rows.map((r) => r.id);

  // Read ahead from a checkpoint that is not the committed one: ignored, the batch is read again.
  const stale = planBatch(pool, row, subject, 'sub_ffffffffffffffffffffffffffffffff', null, 2, clock.now());
  let r = await withTransaction(pool, (tx) => fanOutBatch(tx, deps, 'w-ahead', row, part, subject, stale));
  assert.equal(r.inserted, 2);
  assert.equal((await stale).size, 0);
  const first = await ids();
  assert.equal(first.length, 2);

  // The read-ahead the batch started is the next batch: its messages are the ones written.
  const ahead = await r.next!;
  r = await withTransaction(pool, (tx) => fanOutBatch(tx, deps, 'w-ahead', row, part, subject, Promise.resolve(ahead)));
  assert.deepEqual((await ids()).slice(2), ahead.msgs.map((m) => m.id));
  r = await withTransaction(pool, (tx) => fanOutBatch(tx, deps, 'w-ahead', row, part, subject, r.next));
  assert.deepEqual([r.inserted, r.more, r.next], [1, false, null], 'a short batch ends the fan-out');
  const { rows } = await pool.query('SELECT count(DISTINCT subscriber_id)::int AS n, count(*)::int AS m FROM messages WHERE campaign_id = $1', [c.id]);
  assert.deepEqual(rows[0], { n: 5, m: 5 });
  assert.equal((await report(c.id)).progress.queued, 5);
});

test('test send: rendered copies with a sample subscriber, not counted in the campaign', async () => {
  mx.messages.length = 0;
  const l = await list('Sample');
  await subscriber(at('sam'), [l], { name: 'Sam', attributes: { plan: 'team' } });
  const c = (await live.post('/api/v1/campaigns', body(l))).body;
  const r = await live.post(`/api/v1/campaigns/${c.id}/test`, { to: [at('me'), 'bad address'] });
  assert.equal(r.status, 200);
  assert.equal(r.body.sample.email, at('sam'));
  assert.equal(r.body.data[0].status, 'queued');
  assert.equal(r.body.data[1].error.code, 'validation_failed');
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/test`, { to: ['a@x.net', 'b@x.net', 'c@x.net', 'd@x.net', 'e@x.net', 'f@x.net'] })).status, 422);
  await env.deliverAll();
  const got = await simpleParser(mx.messages.find((m) => m.envelope.to.includes(at('me')))!.raw);
  assert.equal(got.subject, '[Test] News for Sam');
  assert.match(String(got.html), /Hi Sam \(sam@example\.net\), plan team/);
  assert.equal((await report(c.id)).counts.sent, 0);
  assert.equal((await report(c.id)).status, 'draft');
});
