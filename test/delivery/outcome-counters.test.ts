import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { withTransaction } from '../../src/db/pool.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../../src/domain/domains/domains.js';
import { runCampaignStep } from '../../src/domain/campaigns/runner.js';
import { recordEvents } from '../../src/domain/events.js';
import { planOutcome, type PlannedOutcome } from '../../src/delivery/outcome.js';
import { claimDueMessages, recordOutcomes } from '../../src/delivery/queue.js';
import { recordSteps, type Step } from '../../src/delivery/record.js';
import { classifySmtpReply } from '../../src/mail/classify.js';
import type { MessageRow } from '../../src/db/queries/messages.js';
import { createTestAccount } from '../helpers/app.js';
import { RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';
import { api, campaignBody, seedList } from '../campaigns/helpers.js';

// The record statement writes the counters of the delivery events it records (stats_daily,
// campaign_stats, campaign_hourly) itself, and the events_rollup trigger skips its events
// (src/delivery/queue.ts, recordOutcomes). Whatever it writes must equal what the trigger
// writes for the same events: the reference here is a recount by the trigger itself — every
// event of the accounts inserted again in one statement into emptied counters, in a
// transaction that is rolled back.
const clock = new ManualClock('2026-11-20T22:30:00.000Z');
const env = await startMailEnv({ clock });
const { pool, app } = env;
const acme = env.acme;
const beta = await createTestAccount(pool, 'Beta');
const betaDomain = await createDomain(pool, { accountId: beta.accountId, name: 'beta.test', now: clock.now() }, { secret: env.config.secret, targets: dnsTargetsOf(env.config) });
await forceVerifyDomain(pool, betaDomain.id, clock.now());
const accounts = [acme.accountId, beta.accountId];

async function send(headers: Record<string, string>, from: string, to: string, tags?: string[]) {
  const res = await app.inject({
    method: 'POST', url: '/api/v1/emails', headers: { ...headers, 'content-type': 'application/json' },
    payload: { to, from: { email: from }, subject: 'Hi', text: 'Hello', ...(tags ? { tags } : {}) },
  });
  assert.equal(res.statusCode, 202, res.body);
}

/** The counters as stored, summed over their shards. */
async function counters(q: { query: typeof pool.query }) {
  const daily = (await q.query(
    `SELECT account_id, scope, day::text, sum(sent)::int AS sent, sum(delivered)::int AS delivered, sum(deferred)::int AS deferred,
            sum(hard_bounced)::int AS hard, sum(soft_bounced)::int AS soft, sum(opens + clicks + complaints + unsubscribes)::int AS other
       FROM stats_daily WHERE account_id = ANY($1) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    [accounts],
  )).rows;
  const campaign = (await q.query(
    `SELECT s.campaign_id, sum(s.sent)::int AS sent, sum(s.delivered)::int AS delivered, sum(s.deferred)::int AS deferred,
            sum(s.hard_bounced)::int AS hard, sum(s.soft_bounced)::int AS soft, sum(s.opens + s.clicks)::int AS other
       FROM campaign_stats s JOIN campaigns c ON c.id = s.campaign_id WHERE c.account_id = ANY($1) GROUP BY 1 ORDER BY 1`,
    [accounts],
  )).rows;
  const hourly = (await q.query(
    `SELECT h.campaign_id, h.hour::text, sum(h.delivered)::int AS delivered, sum(h.bounces)::int AS bounces, sum(h.opens + h.clicks)::int AS other
       FROM campaign_hourly h JOIN campaigns c ON c.id = h.campaign_id WHERE c.account_id = ANY($1) GROUP BY 1, 2 ORDER BY 1, 2`,
    [accounts],
  )).rows;
  return { daily, campaign, hourly };
}

/** What the events_rollup trigger makes of every event of the accounts, counted afresh. */
async function recount() {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('DELETE FROM stats_daily WHERE account_id = ANY($1)', [accounts]);
    await client.query('DELETE FROM campaign_stats WHERE campaign_id IN (SELECT id FROM campaigns WHERE account_id = ANY($1))', [accounts]);
    await client.query('DELETE FROM campaign_hourly WHERE campaign_id IN (SELECT id FROM campaigns WHERE account_id = ANY($1))', [accounts]);
    await client.query(
      `INSERT INTO events (id, account_id, message_id, campaign_id, type, email, url, data, occurred_at)
       SELECT 'recount_' || id, account_id, message_id, campaign_id, type, email, url, data, occurred_at
         FROM events WHERE account_id = ANY($1) ORDER BY seq`,
      [accounts],
    );
    return await counters(client);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

const byRecipient = (rows: MessageRow[]) => rows.sort((a, b) => a.to_email.localeCompare(b.to_email));
const delivered = (m: MessageRow): PlannedOutcome => planOutcome(m, { kind: 'delivered', response: '250 ok', mx: 'mx.example.net' }, clock.now());
const reply = (m: MessageRow, code: number, text: string): PlannedOutcome => planOutcome(m, classifySmtpReply(code, text, 'mx.example.net', 'RCPT TO'), clock.now());

test('delivery counters: the record statement writes what the events rollup would, for every outcome, campaign and tag, per account', async () => {
  // Transactional mail of two accounts, with and without tags (one named twice), and a campaign with a tag.
  await send(acme.live, 'hi@acme.test', `t1@${RECIPIENT_DOMAIN}`, ['welcome']);
  await send(acme.live, 'hi@acme.test', `t2@${RECIPIENT_DOMAIN}`, ['a', 'a', 'b']);
  await send(acme.live, 'hi@acme.test', `t3@${RECIPIENT_DOMAIN}`);
  await send(acme.live, 'hi@acme.test', `t4@${RECIPIENT_DOMAIN}`, ['welcome']);
  await send(acme.live, 'hi@acme.test', `t5@${RECIPIENT_DOMAIN}`);
  await send(beta.live, 'hi@beta.test', `u1@${RECIPIENT_DOMAIN}`, ['b']);
  await send(beta.live, 'hi@beta.test', `u2@${RECIPIENT_DOMAIN}`);
  await send(beta.live, 'hi@beta.test', `u3@${RECIPIENT_DOMAIN}`, ['b']);
  const live = api(app, acme.live);
  const listId = await seedList(app, pool, acme.live, acme.accountId, { count: 6, prefix: 'reader', domain: RECIPIENT_DOMAIN });
  const campaign = (await live.post('/api/v1/campaigns', campaignBody(listId, { tags: ['monthly'] }))).body;
  assert.equal((await live.post(`/api/v1/campaigns/${campaign.id}/send`)).status, 202);
  await runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => 1000 });

  const first = byRecipient(await claimDueMessages(pool, 'w1', clock.now(), 100, 60_000));
  assert.equal(first.length, 14);
  const m = new Map(first.map((r) => [r.to_email.split('@')[0], r]));
  // Another worker took reader6's claim: its outcome is not recorded, so not counted.
  await pool.query(`UPDATE messages SET locked_by = 'w2' WHERE id = $1`, [m.get('reader6')!.id]);

  const dead = reply(m.get('t2')!, 550, '550 5.1.1 <x>: user unknown');
  assert.equal(dead.event.type, 'hard_bounce');
  const blocked = reply(m.get('reader3')!, 550, '550 5.7.1 Mail not accepted from your server, contact the postmaster');
  assert.equal(blocked.event.type, 'soft_bounce');
  const later = (x: MessageRow) => reply(x, 451, '451 4.3.0 try again later');
  // A group of deliveries only (one statement), a group with bounces and deferrals (a transaction).
  await recordSteps(pool, 'w1', clock.now(), [delivered(m.get('t1')!), delivered(m.get('reader1')!), delivered(m.get('u1')!), delivered(m.get('reader6')!)]);
  await recordSteps(pool, 'w1', clock.now(), [
    dead, blocked, later(m.get('t3')!), later(m.get('reader2')!), later(m.get('u2')!), delivered(m.get('t4')!),
    { release: { id: m.get('reader4')!.id, nextAttemptAt: clock.now() } },
  ] as Step[]);
  // In a caller's transaction: the events it inserts after the record statement are the trigger's to count.
  await withTransaction(pool, async (tx) => {
    const o = delivered(m.get('u3')!);
    await recordOutcomes(tx, 'w1', [], [{ outcome: o.outcome, source: null, event: { id: 'evt_after_1', ...o.event, data: {} } }]);
    await recordEvents(tx, [{ accountId: beta.accountId, messageId: m.get('u3')!.id, type: 'open', email: m.get('u3')!.to_email, data: { unique: 'false' }, occurredAt: clock.now() }]);
    const r1 = m.get('reader1')!;
    await recordEvents(tx, [{ accountId: acme.accountId, messageId: r1.id, type: 'open', email: r1.to_email, data: { unique: 'false' }, occurredAt: clock.now() }]);
  });
  await recordSteps(pool, 'w1', clock.now(), [delivered(m.get('t5')!), delivered(m.get('reader5')!)]);

  // Past midnight UTC and into the next hour: the deferred and released messages are tried again,
  // and reader6, whose other worker's lease ran out.
  clock.advance(2 * 3600_000);
  const second = byRecipient(await claimDueMessages(pool, 'w1', clock.now(), 100, 60_000));
  assert.deepEqual(second.map((r) => r.to_email.split('@')[0]).sort(), ['reader2', 'reader4', 'reader6', 't3', 'u2']);
  const again = new Map(second.map((r) => [r.to_email.split('@')[0], r]));
  await recordSteps(pool, 'w1', clock.now(), [delivered(again.get('reader2')!), later(again.get('t3')!), delivered(again.get('u2')!), delivered(again.get('reader4')!), delivered(again.get('reader6')!)]);
  // The retry window runs out: a soft bounce of the expired message.
  clock.advance(73 * 3600_000);
  const third = await claimDueMessages(pool, 'w1', clock.now(), 100, 60_000);
  assert.deepEqual(third.map((r) => r.to_email), [`t3@${RECIPIENT_DOMAIN}`]);
  const expired = later(third[0]);
  assert.equal(expired.event.type, 'soft_bounce');
  await recordSteps(pool, 'w1', clock.now(), [expired]);

  const types = (await pool.query(`SELECT type, count(*)::int AS n FROM events WHERE account_id = ANY($1) GROUP BY 1 ORDER BY 1`, [accounts])).rows;
  assert.deepEqual(types, [
    { type: 'deferred', n: 4 }, { type: 'delivered', n: 11 }, { type: 'hard_bounce', n: 1 }, { type: 'open', n: 2 }, { type: 'sent', n: 14 }, { type: 'soft_bounce', n: 2 },
  ]);

  // Every event carries its message's campaign, whoever set it (the statement or the events_campaign trigger).
  const strays = await pool.query(
    `SELECT e.type, e.campaign_id, m.campaign_id AS message_campaign FROM events e JOIN messages m ON m.id = e.message_id
      WHERE e.account_id = ANY($1) AND e.campaign_id IS DISTINCT FROM m.campaign_id`,
    [accounts],
  );
  assert.deepEqual(strays.rows, []);
  assert.equal((await pool.query(`SELECT count(*)::int AS n FROM events WHERE campaign_id = $1`, [campaign.id])).rows[0].n, 6 + 7 + 1);

  const stored = await counters(pool);
  const reference = await recount();
  assert.deepEqual(stored, reference);
  // What the comparison covers: both accounts, both days, the campaign's and the tags' scopes, every outcome type.
  const scopes = new Set(stored.daily.map((r) => `${r.account_id === beta.accountId ? 'beta' : 'acme'} ${r.scope.replace(campaign.id, 'C')} ${r.day}`));
  for (const s of ['acme  2026-11-20', 'acme  2026-11-21', 'acme  2026-11-24', 'acme c:C 2026-11-20', 'acme c:C 2026-11-21', 'acme t:welcome 2026-11-20',
    'acme t:a 2026-11-20', 'acme t:monthly 2026-11-21', 'beta  2026-11-20', 'beta  2026-11-21', 'beta t:b 2026-11-20']) assert.ok(scopes.has(s), s);
  const aTag = stored.daily.find((r) => r.scope === 't:a');
  assert.equal(aTag?.hard, 2, 'a tag named twice counts twice');
  assert.deepEqual(stored.campaign, [{ campaign_id: campaign.id, sent: 6, delivered: 5, deferred: 1, hard: 0, soft: 1, other: 1 }], 'the open after the record statement is the campaign\'s');
  assert.equal(stored.hourly.length, 2, 'two hours of the campaign');
  const betaTotal = stored.daily.filter((r) => r.account_id === beta.accountId && r.scope === '').reduce((n, r) => n + r.delivered, 0);
  assert.equal(betaTotal, 3);
  assert.equal(stored.daily.filter((r) => r.account_id === beta.accountId && r.scope === '').reduce((n, r) => n + r.other, 0), 1, 'the open after the record statement is counted');

  // The statistics endpoint, per account: each sees its own deliveries only.
  const stats = async (headers: Record<string, string>) =>
    (await app.inject({ method: 'GET', url: '/api/v1/stats?from=2026-11-20&to=2026-11-24T23:59:59Z', headers })).json().counts;
  const [a, b] = [await stats(acme.live), await stats(beta.live)];
  assert.deepEqual([a.sent, a.delivered, a.deferred, b.sent, b.delivered, b.deferred], [11, 8, 3, 3, 3, 1]);
});
