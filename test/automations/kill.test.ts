import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withTransaction } from '../../src/db/pool.js';
import { triggerEvent } from '../../src/domain/automations/trigger.js';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { startCli } from '../helpers/cli.js';
import { automationAccount, engineOf, makeAutomation } from './helpers.js';

/**
 * A worker process killed with SIGKILL in the middle of performing steps: every run still
 * completes (the next worker picks up what the dead one held), and no step is performed twice:
 * each run queued exactly two messages and has exactly one history line per step.
 */
const { app, pool, config, dbUrl } = await bootApp();
const acme = await createTestAccount(pool);
const { api, templateId, from } = await automationAccount(app, pool, config, acme);
const RUNS = 400;

test('kill -9 of a worker loses no run and performs no step twice', async () => {
  const a = await makeAutomation(api, {
    trigger: { event: 'bulk' },
    steps: [{ type: 'send', templateId, from }, { type: 'wait', duration: '1s' }, { type: 'send', subject: 'Two', text: 'Two', from }],
    reentry: 'always',
  });
  const now = new Date();
  for (let i = 0; i < RUNS; i += 200) {
    await withTransaction(pool, async (tx) => {
      for (let j = i; j < Math.min(RUNS, i + 200); j++) await triggerEvent(tx, acme.accountId, { event: 'bulk', email: `r${j}@example.com` }, now);
    });
  }

  const worker = await startCli(['start', '--role', 'worker'], {
    DATABASE_URL: dbUrl,
    POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-kill-')),
    POSTLINE_SECRET: config.secret,
    POSTLINE_DELIVERY: 'capture',
    LOG_LEVEL: 'silent',
  }, /postline ready/);
  after(() => worker.child.kill('SIGKILL')); // never outlive the test, whatever fails
  let sendsAtKill = 0;
  try {
    for (let i = 0; i < 600 && sendsAtKill === 0; i++) {
      await new Promise((r) => setTimeout(r, 20)); // polling the other process's progress, not waiting out a step
      sendsAtKill = (await pool.query('SELECT count(*)::int AS n FROM automation_sends')).rows[0].n;
    }
  } finally {
    worker.child.kill('SIGKILL');
  }
  await new Promise((resolve) => worker.child.once('exit', resolve));
  assert.ok(sendsAtKill > 0 && sendsAtKill < 2 * RUNS, `killed mid-way (sends at kill: ${sendsAtKill})`);

  // The next worker, on its own clock: past the 1 s waits without sleeping through them.
  const clock = new ManualClock(new Date(Date.now() + 60_000));
  const drain = engineOf(pool, config, clock);
  await drain();
  clock.advance(2000);
  await drain();

  const statuses = await pool.query(`SELECT status, count(*)::int AS n FROM automation_runs WHERE automation_id = $1 GROUP BY status`, [a.id]);
  assert.deepEqual(statuses.rows, [{ status: 'completed', n: RUNS }]);
  const perRun = await pool.query(
    `SELECT r.id, (SELECT count(*)::int FROM automation_sends s WHERE s.run_id = r.id) AS sends,
            (SELECT count(*)::int FROM messages m WHERE m.to_email = r.email) AS messages,
            (SELECT array_agg(h.path || ' ' || h.outcome ORDER BY h.seq) FROM automation_run_steps h WHERE h.run_id = r.id) AS history
       FROM automation_runs r WHERE r.automation_id = $1`,
    [a.id],
  );
  for (const r of perRun.rows) {
    assert.equal(r.sends, 2, r.id);
    assert.equal(r.messages, 2, r.id);
    assert.deepEqual(r.history, ['0 sent', '1 waiting', '1 resumed', '2 sent'], r.id);
  }
  const counters = (await api.get(`/api/v1/automations/${a.id}`)).body.counters;
  assert.equal(counters.runsStarted, RUNS);
  assert.equal(counters.runsCompleted, RUNS);
  assert.deepEqual(counters.sends.map((s: { sent: number }) => s.sent), [RUNS, RUNS]);
});
