import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../../src/clock.js';
import { FANOUT_LEASE_MS, runFanOut } from '../../src/domain/campaigns/fanout.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { api, campaignBody, seedList } from './helpers.js';

const CHILD = fileURLToPath(new URL('./fanout-child.ts', import.meta.url));
const SUBSCRIBERS = 3000;

test('kill -9 of two workers fanning out one campaign side by side: the parts resume at their checkpoints; every recipient gets exactly one message', { timeout: 120_000 }, async () => {
  const t = await bootApp();
  const { app, pool, config, dbUrl } = t;
  const acme = await createTestAccount(pool);
  await createVerifiedDomain(pool, acme.accountId, 'acme.test', config.secret);
  const listId = await seedList(app, pool, acme.live, acme.accountId, { count: SUBSCRIBERS, domain: 'example.net' });
  // Every 10th subscriber suppressed: skips must be counted once too.
  await pool.query(
    `INSERT INTO suppressions (id, account_id, email, email_key, reason, created_at)
     SELECT 'sup_' || replace(gen_random_uuid()::text, '-', ''), account_id, email, email_key, 'manual', now()
       FROM subscribers WHERE account_id = $1 AND (regexp_replace(email, '\\D', '', 'g'))::int % 10 = 0`,
    [acme.accountId],
  );
  const live = api(app, acme.live);
  const c = (await live.post('/api/v1/campaigns', campaignBody(listId))).body;
  assert.equal((await live.post(`/api/v1/campaigns/${c.id}/send`)).status, 202);

  // Two fan-out processes (the audience is split into four parts): they fan out two parts side by
  // side until both are killed.
  const start = () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, DATABASE_URL: dbUrl, FANOUT_BATCH: '20' } });
    let out = '';
    const seen = (re: RegExp, n: number) =>
      new Promise<void>((resolve, reject) => {
        const check = () => (out.match(re) ?? []).length >= n && resolve();
        child.stdout.on('data', (d) => {
          out += d;
          check();
        });
        child.on('exit', (code) => reject(new Error(`child exited (${code}) before being killed:\n${out}`)));
        check();
      });
    const ready = seen(/^ready$/gm, 1);
    const batches = (n: number) => seen(/^batch /gm, n);
    return { child, ready, batches };
  };
  const a = start();
  const b = start();
  await Promise.all([a.ready, b.ready]);
  for (const { child } of [a, b]) child.stdin.write('go\n');
  await Promise.all([a.batches(4), b.batches(4)]);
  for (const { child } of [a, b]) {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }

  const mid = await pool.query('SELECT queued, fanout_done FROM campaigns WHERE id = $1', [c.id]);
  assert.equal(mid.rows[0].fanout_done, false, 'killed mid-fan-out');
  assert.ok(mid.rows[0].queued > 0 && mid.rows[0].queued < 2700, `some but not all queued (${mid.rows[0].queued})`);
  const parts = await pool.query('SELECT part, last_subscriber_id, upto_id, locked_by FROM campaign_fanout_parts WHERE campaign_id = $1 ORDER BY part', [c.id]);
  const leased = parts.rows.filter((p) => p.locked_by);
  assert.equal(new Set(leased.map((p) => p.locked_by.split(':')[1])).size, 2, 'each dead worker still holds the lease of the part it was fanning out');
  assert.equal(leased.length, 2);

  // Another worker takes the free parts at once, and the dead workers' parts once their leases expire.
  const later = new ManualClock(new Date(Date.now() + 1000));
  const fanOutAll = async () => {
    let n = 0;
    for (let r; (r = await runFanOut({ pool, now: () => later.now(), quotaOf: async () => null, batchSize: 50 })) !== null;) n += r;
    return n;
  };
  assert.ok((await fanOutAll()) > 0);
  const left = await pool.query('SELECT locked_by FROM campaign_fanout_parts WHERE campaign_id = $1', [c.id]);
  assert.deepEqual(left.rows.map((p) => p.locked_by).sort(), leased.map((p) => p.locked_by).sort(), 'only the dead workers\' parts are left');
  later.advance(FANOUT_LEASE_MS);
  assert.ok((await fanOutAll()) > 0);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM campaign_fanout_parts WHERE campaign_id = $1', [c.id])).rows[0].n, 0);
  assert.equal((await pool.query('SELECT fanout_done FROM campaigns WHERE id = $1', [c.id])).rows[0].fanout_done, true);

  const { rows } = await pool.query(
    `SELECT count(*)::int AS messages, count(DISTINCT subscriber_id)::int AS subscribers, count(DISTINCT lower(to_email))::int AS addresses
       FROM messages WHERE campaign_id = $1`,
    [c.id],
  );
  assert.deepEqual(rows[0], { messages: 2700, subscribers: 2700, addresses: 2700 });
  const missing = await pool.query(
    `SELECT count(*)::int AS n FROM subscribers s
      WHERE s.account_id = $1 AND NOT EXISTS (SELECT 1 FROM suppressions p WHERE p.email_key = s.email_key)
        AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.campaign_id = $2 AND m.subscriber_id = s.id)`,
    [acme.accountId, c.id],
  );
  assert.equal(missing.rows[0].n, 0, 'no recipient skipped');
  const report = (await live.get(`/api/v1/campaigns/${c.id}`)).body;
  assert.equal(report.progress.queued, 2700);
  assert.equal(report.progress.recipients, 2700);
  assert.equal(report.counts.sent, 2700, 'one sent event per message');
  assert.equal((await live.get(`/api/v1/stats?campaignId=${c.id}`)).body.counts.sent, 2700, 'daily counters as exact as the messages');
  assert.equal((await pool.query(`SELECT count(*)::int AS n FROM events WHERE campaign_id = $1 AND type = 'sent'`, [c.id])).rows[0].n, 2700);
  assert.equal(report.counts.skipped.suppressed, 300);
});
