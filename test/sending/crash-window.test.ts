import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

/**
 * A worker process killed with SIGKILL while a slow MX is accepting its
 * messages. Outcomes are recorded as they happen, so only what was in flight is sent again,
 * and the next worker on the host takes the dead one's leases at once (the clock never moves:
 * no lease expires in this test).
 */

const CONNECTIONS = 4;
const TOTAL = 80;
// The API's clock is days before the child's real one, so everything is due for the child.
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock, mx: { dataDelayMs: 100 } });
const { pool, mx, dns } = env;

test('crash window: kill -9 of a worker mid-batch re-sends at most what was in flight, and the next worker resumes at once', async () => {
  const emails = Array.from({ length: TOTAL }, (_, i) => basicEmail({ to: `crash${i}@${RECIPIENT_DOMAIN}` }));
  const res = await env.app.inject({ method: 'POST', url: '/api/v1/emails/batch', headers: { ...env.acme.live, 'content-type': 'application/json' }, payload: { emails } });
  assert.equal(res.statusCode, 200);

  const child = spawn(process.execPath, ['--import', 'tsx', 'src/bin/postline.ts', 'start', '--role', 'worker'], {
    env: {
      ...process.env,
      DATABASE_URL: env.dbUrl,
      POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-crash-')),
      POSTLINE_SECRET: env.config.secret,
      POSTLINE_FBL_SECRET: 'fbl_test-secret-0123456789',
      POSTLINE_DELIVERY: 'mx',
      POSTLINE_DNS_SERVERS: dns.address,
      POSTLINE_MX_PORT: String(mx.port),
      POSTLINE_BASE_URL: 'https://postline.test',
      POSTLINE_MX_CONNECTIONS_PER_HOST: String(CONNECTIONS),
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  await mx.waitForMessages(20, 60_000).catch((err: Error) => {
    throw new Error(`${err.message}; worker stderr: ${stderr}`);
  });
  child.kill('SIGKILL');
  await exited;
  await new Promise((resolve) => setTimeout(resolve, 300)); // DATA the MX was still answering
  const receivedBeforeKill = mx.messages.length;
  const recorded = (await pool.query(`SELECT count(*)::int AS n FROM messages WHERE status = 'delivered'`)).rows[0].n;
  assert.ok(recorded >= receivedBeforeKill - 2 * CONNECTIONS, `${receivedBeforeKill} received but only ${recorded} recorded before the kill`);
  assert.ok(receivedBeforeKill < TOTAL, 'the kill came mid-run');

  // A new worker on this host: the dead process's leases are released at once, not after 5 minutes.
  const engine = env.newEngine();
  const released = await engine.releaseDeadLeases();
  assert.ok(released > 0, 'leases of the killed worker released');
  await env.deliverAll(engine);

  const perRecipient = new Map<string, number>();
  for (const m of mx.messages) for (const to of m.envelope.to) perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
  assert.equal(perRecipient.size, TOTAL, 'every message delivered');
  const duplicates = mx.messages.length - TOTAL;
  assert.ok(duplicates <= 2 * CONNECTIONS, `${duplicates} duplicates (at most the ${CONNECTIONS} connections' messages in flight, twice over)`);
  const statuses = (await pool.query(`SELECT status, count(*)::int AS n FROM messages GROUP BY status`)).rows;
  assert.deepEqual(statuses, [{ status: 'delivered', n: TOTAL }]);
});
