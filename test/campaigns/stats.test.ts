import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { recordEvents, type EventType } from '../../src/domain/events.js';
import { runCampaignStep } from '../../src/domain/campaigns/runner.js';
import { classify, HEALTH_RULES } from '../../src/domain/stats/account-health.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { api, campaignBody, seedList } from './helpers.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock });
const acme = await createTestAccount(pool, 'Acme', 1000);
await createVerifiedDomain(pool, acme.accountId, 'acme.test', config.secret);
const live = api(app, acme.live);
const runner = () => runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => 1000 });

async function events(accountId: string, type: EventType, n: number, at: Date = clock.now()) {
  await recordEvents(pool, Array.from({ length: n }, (_, i) => ({ accountId, messageId: null, type, email: `r${i}@example.net`, occurredAt: at })));
}

test('stats: counts, rates, a daily series of the range with zeros, quota; tag and campaign filters', async () => {
  const sent = await live.post('/api/v1/emails', { to: 'ada@example.net', from: { email: 'hi@acme.test' }, subject: 'Hi', text: 'x', tags: ['welcome'] });
  assert.equal(sent.status, 202);
  await events(acme.accountId, 'delivered', 1);
  await events(acme.accountId, 'sent', 2, new Date('2026-11-18T12:00:00.000Z'));
  const r = await live.get('/api/v1/stats');
  assert.equal(r.status, 200);
  assert.equal(r.body.from, '2026-10-22');
  assert.equal(r.body.to, '2026-11-20');
  assert.equal(r.body.daily.length, 30);
  assert.equal(r.body.counts.sent, 3);
  assert.equal(r.body.counts.delivered, 1);
  assert.equal(r.body.rates.delivery, 0.3333);
  assert.deepEqual(r.body.daily.find((d: { date: string }) => d.date === '2026-11-18').sent, 2);
  assert.equal(r.body.daily.find((d: { date: string }) => d.date === '2026-11-19').sent, 0);
  assert.deepEqual(r.body.quota, { used: 1, limit: 1000, resetsAt: '2026-12-01T00:00:00.000Z' });
  assert.equal(r.body.health.status, 'ok');

  const tagged = await live.get('/api/v1/stats?tag=welcome');
  assert.equal(tagged.body.counts.sent, 1);
  assert.equal((await live.get('/api/v1/stats?tag=other')).body.counts.sent, 0);
  const narrow = await live.get('/api/v1/stats?from=2026-11-18&to=2026-11-18T23:59:59Z');
  assert.equal(narrow.body.daily.length, 1);
  assert.equal(narrow.body.counts.sent, 2);

  const listId = await seedList(app, pool, acme.live, acme.accountId, { count: 3, domain: 'example.net' });
  const c = (await live.post('/api/v1/campaigns', campaignBody(listId))).body;
  await live.post(`/api/v1/campaigns/${c.id}/send`);
  await runner();
  const byCampaign = await live.get(`/api/v1/stats?campaignId=${c.id}`);
  assert.equal(byCampaign.body.counts.sent, 3);
  assert.equal(byCampaign.body.filter.campaignId, c.id);
  assert.equal((await live.get('/api/v1/stats')).body.counts.sent, 6, 'the account total includes campaigns');
  assert.equal((await live.get('/api/v1/stats')).body.quota.used, 4, 'campaign messages count against the quota');
});

test('stats: bad queries are 422, never 500', async () => {
  for (const q of ['from=2026-11-20&to=2026-11-01', 'from=2025-01-01&to=2026-11-20', 'from=yesterday', 'tag=a&campaignId=cmp_0000000000000000000000000000000a',
    'campaignId=cmp_0000000000000000000000000000000a', 'campaignId=nope', 'tag=', `tag=${'x'.repeat(101)}`, 'tag=a%00b']) {
    const r = await live.get(`/api/v1/stats?${q}`);
    assert.equal(r.status, 422, `${q} → ${r.status} ${JSON.stringify(r.body)}`);
  }
  assert.equal((await live.get('/api/v1/stats?from=2025-11-20&to=2026-11-20')).status, 200, '366 days is the limit');
  const other = await createTestAccount(pool, 'Other');
  const theirs = (await live.get('/api/v1/campaigns?limit=1')).body.data[0].id;
  assert.equal((await api(app, other.live).get(`/api/v1/stats?campaignId=${theirs}`)).status, 422, "another account's campaign is unknown");
});

test('health thresholds: bounce 5 % / 10 %, complaint 0.1 % / 0.5 %, sender side 2 % / 5 %, at and past each boundary; below 100 sent it is ok', () => {
  assert.equal(classify({ bounce: 0.0499, complaint: 0, senderSide: 0 }, 1000), 'ok');
  assert.equal(classify({ bounce: 0.05, complaint: 0, senderSide: 0 }, 1000), 'warning');
  assert.equal(classify({ bounce: 0.0999, complaint: 0, senderSide: 0 }, 1000), 'warning');
  assert.equal(classify({ bounce: 0.1, complaint: 0, senderSide: 0 }, 1000), 'at_risk');
  assert.equal(classify({ bounce: 0, complaint: 0.0009, senderSide: 0 }, 1000), 'ok');
  assert.equal(classify({ bounce: 0, complaint: 0.001, senderSide: 0 }, 1000), 'warning');
  assert.equal(classify({ bounce: 0, complaint: 0.0049, senderSide: 0 }, 1000), 'warning');
  assert.equal(classify({ bounce: 0, complaint: 0.005, senderSide: 0 }, 1000), 'at_risk');
  assert.equal(classify({ bounce: 0, complaint: 0, senderSide: 0.0199 }, 1000), 'ok');
  assert.equal(classify({ bounce: 0, complaint: 0, senderSide: 0.02 }, 1000), 'warning');
  assert.equal(classify({ bounce: 0, complaint: 0, senderSide: 0.0499 }, 1000), 'warning');
  assert.equal(classify({ bounce: 0, complaint: 0, senderSide: 0.05 }, 1000), 'at_risk');
  assert.equal(classify({ bounce: 0.06, complaint: 0, senderSide: 0.05 }, 1000), 'at_risk', 'the worst rate decides');
  assert.equal(classify({ bounce: 0.5, complaint: 0.5, senderSide: 0 }, HEALTH_RULES.minSent - 1), 'ok');
  assert.equal(classify({ bounce: 0.5, complaint: 0.5, senderSide: 0 }, HEALTH_RULES.minSent), 'at_risk');
});

test('health at_risk: sending campaigns pause with the reason; send and resume answer 409 account_at_risk until acknowledged', async () => {
  const risky = await createTestAccount(pool, 'Risky');
  await createVerifiedDomain(pool, risky.accountId, 'risky.test', config.secret);
  const r = api(app, risky.live);
  const listId = await seedList(app, pool, risky.live, risky.accountId, { count: 2, domain: 'example.org' });
  const body = campaignBody(listId, { from: { email: 'news@risky.test' }, throttle: 1 });
  const sending = (await r.post('/api/v1/campaigns', body)).body;
  assert.equal((await r.post(`/api/v1/campaigns/${sending.id}/send`)).status, 202);
  const draft = (await r.post('/api/v1/campaigns', body)).body;

  await events(risky.accountId, 'sent', 200);
  await events(risky.accountId, 'delivered', 190);
  await events(risky.accountId, 'hard_bounce', 12);
  let health = (await r.get('/api/v1/stats')).body.health;
  assert.equal(health.status, 'warning', JSON.stringify(health));
  await events(risky.accountId, 'hard_bounce', 8);
  health = (await r.get('/api/v1/stats')).body.health;
  assert.equal(health.status, 'at_risk');
  assert.equal(health.bounceRate, 0.1);
  assert.equal(health.sendingBlocked, true);

  const step = await runner();
  assert.equal(step.pausedAtRisk, 1);
  const paused = (await r.get(`/api/v1/campaigns/${sending.id}`)).body;
  assert.equal(paused.status, 'paused');
  assert.equal(paused.pauseReason, 'account_at_risk');
  const refused = await r.post(`/api/v1/campaigns/${draft.id}/send`);
  assert.equal(refused.status, 409);
  assert.equal(refused.body.code, 'account_at_risk');
  assert.equal((await r.post(`/api/v1/campaigns/${sending.id}/resume`)).body.code, 'account_at_risk');

  const sandboxAck = await api(app, risky.test).post('/api/v1/stats/health/acknowledge');
  assert.equal(sandboxAck.status, 200);
  assert.equal(sandboxAck.body.sandbox, true);
  assert.equal(sandboxAck.body.sendingBlocked, true, 'a test key acknowledges nothing');

  clock.advance(1000);
  const ack = await r.post('/api/v1/stats/health/acknowledge');
  assert.equal(ack.status, 200);
  assert.equal(ack.body.status, 'at_risk');
  assert.equal(ack.body.sendingBlocked, false);
  assert.equal((await r.post(`/api/v1/campaigns/${sending.id}/resume`)).status, 200);
  assert.equal((await r.post(`/api/v1/campaigns/${draft.id}/send`)).status, 202);
  assert.equal((await runner()).pausedAtRisk, 0, 'an acknowledged episode does not pause again');

  // The episode ends when the rates fall back; a new one needs a new acknowledgement.
  await events(risky.accountId, 'sent', 2000);
  await events(risky.accountId, 'delivered', 2000);
  assert.equal((await r.get('/api/v1/stats')).body.health.status, 'ok');
  clock.advance(1000);
  await events(risky.accountId, 'hard_bounce', 300);
  assert.equal((await r.get('/api/v1/stats')).body.health.sendingBlocked, true);
  assert.equal((await runner()).pausedAtRisk, 2);
});

test('one health behind both views: sender-side refusals judged alike by /stats and /account/health, from rollups, over the same UTC days', async () => {
  const acct = await createTestAccount(pool, 'Blocked');
  const a = api(app, acct.live);
  const refusals = (reason: string, n: number, at: Date = clock.now()) =>
    recordEvents(pool, Array.from({ length: n }, (_, i) => ({
      accountId: acct.accountId, messageId: null, type: 'soft_bounce' as const, email: `b${i}@example.net`,
      data: { bounce: { reason, category: 'sender' } }, occurredAt: at,
    })));
  await events(acct.accountId, 'sent', 200);
  await events(acct.accountId, 'delivered', 190);
  await refusals('blocked', 6);
  await refusals('auth_failure', 3);
  await refusals('blocked', 50, new Date(clock.now().getTime() - 7 * 86_400_000)); // 8 UTC days ago: outside the 7-day window
  await recordEvents(pool, [{ accountId: acct.accountId, messageId: null, type: 'soft_bounce', email: 'full@example.net', data: { bounce: { reason: 'mailbox_full', category: 'recipient' } }, occurredAt: clock.now() }]);
  let stats = (await a.get('/api/v1/stats')).body.health;
  let view = (await a.get('/api/v1/account/health')).body;
  assert.deepEqual([stats.status, stats.senderSideRate], ['warning', 0.045]);
  assert.deepEqual([view.status, view.senderSide], ['warning', { total: 9, rate: 0.045, byReason: { auth_failure: 3, blocked: 6 } }]);
  assert.equal(view.from, '2026-11-14T00:00:00.000Z', 'the window is the last 7 UTC days, today included');
  assert.equal((await a.get('/api/v1/account/health?days=8')).body.senderSide.total, 59);

  await refusals('blocked', 1);
  stats = (await a.get('/api/v1/stats')).body.health;
  view = (await a.get('/api/v1/account/health')).body;
  assert.deepEqual([stats.status, stats.sendingBlocked], ['at_risk', true], '10 of 200 sends refused: 5 %');
  assert.equal(view.status, 'critical', 'the same level, named as the deliverability view documents it');
  assert.deepEqual(view.issues, [{ code: 'sender_side_bounces', message: 'receivers refused our mail (blocked, auth_failure): 5.00 % of sent mail in the last 7 days (critical at 5.0 %)' }]);

  // Reading an unchanged health writes nothing; a test key never writes it.
  const recorded = async (id: string) => (await pool.query('SELECT status, evaluated_at FROM account_health WHERE account_id = $1', [id])).rows;
  const before = await recorded(acct.accountId);
  clock.advance(1000);
  await a.get('/api/v1/stats');
  assert.deepEqual(await recorded(acct.accountId), before);
  const fresh = await createTestAccount(pool, 'Fresh');
  await events(fresh.accountId, 'sent', 100);
  await events(fresh.accountId, 'hard_bounce', 10);
  const sandboxed = await api(app, fresh.test).get('/api/v1/stats');
  assert.deepEqual([sandboxed.body.health.status, sandboxed.body.health.sendingBlocked], ['at_risk', true]);
  assert.deepEqual(await recorded(fresh.accountId), [], 'a test key records nothing');
  await api(app, fresh.live).get('/api/v1/stats');
  assert.equal((await recorded(fresh.accountId))[0].status, 'at_risk');
});
