import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { basicEmail, startMailEnv } from '../helpers/mail-env.js';
import { peakInWindow, startZoo } from '../helpers/receiver-zoo.js';
import { runCli } from '../helpers/cli.js';

/**
 * Two real worker processes against a zoo of receivers, each one behaviour, under a test
 * policy with small limits and short durations. The receivers prove from their side that no
 * limit was exceeded; the database that nothing bounced or was suppressed by throttling, that
 * everything arrived once the receiver accepted, and that the rest flowed meanwhile.
 */
const COUNTS = { conncap: 30, ratecap: 30, grey: 5, throttled: 10, fast: 30 };
const POLICY = {
  default: { maxConnections: 10, greylistRetry: '1s', rampEvery: '1s' },
  providers: [
    { name: 'conncap', mx: ['*.conncap.zoo.test'], maxConnections: 2, messagesPerConnection: 5 },
    // 300/min: a bucket of 10 refilled at 290/61 per second; any 2 s hold at most 10 + 4.75 × 3.
    { name: 'ratecap', mx: ['*.ratecap.zoo.test'], maxConnections: 3, messagesPerMinute: 300 },
    { name: 'grey', mx: ['*.grey.zoo.test'], greylistRetry: '1s' },
    { name: 'throttled', mx: ['*.throttled.zoo.test'], maxConnections: 2, onReply: [{ match: 'TSS04', suspend: '3s' }], rampEvery: '1s' },
  ],
};

const env = await startMailEnv();
const zoo = await startZoo({
  conncap: { maxConnections: 2, delayMs: 30 },
  ratecap: { rate: { n: 24, windowMs: 2000 } },
  grey: { greylist: true },
  throttled: { throttleForMs: 2000 },
  fast: { delayMs: 5 },
});
after(() => zoo.close());
for (const name of Object.keys(COUNTS)) {
  env.dns.setRecords(`${name}.example`, 'MX', [{ exchange: `mx1.${name}.zoo.test`, priority: 10 }]);
  env.dns.setRecords(`mx1.${name}.zoo.test`, 'A', [zoo.mx[name].address]);
}

function startWorker(policyPath: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/bin/postline.ts', 'start', '--role', 'worker'], {
    env: {
      ...process.env,
      DATABASE_URL: env.dbUrl,
      POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-zoo-')),
      POSTLINE_SECRET: env.config.secret,
      POSTLINE_FBL_SECRET: 'fbl_test-secret-0123456789',
      POSTLINE_DELIVERY: 'mx',
      POSTLINE_DNS_SERVERS: env.dns.address,
      POSTLINE_MX_PORT: String(zoo.port),
      POSTLINE_BASE_URL: 'https://postline.test',
      POSTLINE_DELIVERY_POLICY: policyPath,
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (c: Buffer) => process.stderr.write(c));
  after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return child;
}

test('receiver zoo, two workers: limits hold at every receiver, throttling and greylisting never bounce, everything arrives, the rest flows meanwhile', { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'postline-policy-'));
  const policyPath = join(dir, 'policy.json');
  writeFileSync(policyPath, JSON.stringify(POLICY));

  const emails = Object.entries(COUNTS).flatMap(([name, n]) => Array.from({ length: n }, (_, i) => basicEmail({ to: `r${i}@${name}.example` })));
  for (let i = 0; i < emails.length; i += 100) {
    const res = await env.app.inject({ method: 'POST', url: '/api/v1/emails/batch', headers: { ...env.acme.live, 'content-type': 'application/json' }, payload: { emails: emails.slice(i, i + 100) } });
    assert.equal(res.statusCode, 200);
  }
  const start = Date.now();
  const workers = [startWorker(policyPath), startWorker(policyPath)];

  const total = emails.length;
  for (;;) {
    const { rows } = await env.pool.query(`SELECT count(*) FILTER (WHERE status = 'delivered')::int AS delivered, count(*) FILTER (WHERE status IN ('bounced', 'failed'))::int AS failed FROM messages`);
    assert.equal(rows[0].failed, 0, 'nothing bounced or failed');
    if (rows[0].delivered === total) break;
    if (Date.now() - start > 60_000) {
      const stuck = await env.pool.query(`SELECT to_domain, status, attempts, next_attempt_at, locked_by, last_response FROM messages WHERE status <> 'delivered' ORDER BY to_domain`);
      const leases = await env.pool.query('SELECT * FROM delivery_leases');
      const shaping = await env.pool.query('SELECT destination, suspended_until, rate_factor, tokens FROM delivery_shaping');
      assert.fail(`only ${rows[0].delivered} of ${total} delivered after 60 s (now ${new Date().toISOString()}): ${JSON.stringify({ stuck: stuck.rows, leases: leases.rows, shaping: shaping.rows })}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const w of workers) w.kill('SIGTERM');

  // Every receiver got every one of its messages, each once.
  for (const [name, n] of Object.entries(COUNTS)) {
    const tos = zoo.mx[name].accepted.map((a) => a.to);
    assert.equal(tos.length, n, `${name}: ${tos.length} accepted`);
    assert.equal(new Set(tos).size, n, `${name}: no duplicates`);
  }
  // Connections: never more than 2 open at once across both workers, never refused.
  assert.ok(zoo.mx.conncap.maxOpen <= 2, `conncap had ${zoo.mx.conncap.maxOpen} connections open at once`);
  assert.deepEqual(zoo.mx.conncap.refusals, []);
  // Rate: never past the receiver's limit (no 4.7.28), and spread as the bucket allows.
  assert.deepEqual(zoo.mx.ratecap.refusals, []);
  // Any window W holds at most the bucket (10) and its refill over W plus a token's lifetime (1 s).
  const rateTimes = zoo.mx.ratecap.accepted.map((a) => a.at);
  for (const w of [1000, 2000, 3000]) {
    const peak = peakInWindow(rateTimes, w);
    assert.ok(peak <= Math.floor(10 + (290 / 61) * (w / 1000 + 1)), `${peak} accepted within ${w} ms`);
  }
  // Greylisting: each retried once after greylistRetry, never on the 1-minute backoff.
  assert.equal(zoo.mx.grey.greylisted, COUNTS.grey);
  // The throttling receiver was suspended after its first reply, not hammered for 2 s: once
  // suspended, a message not yet on its connection goes back untried, so each connection open
  // to it (2 at most) carries at most one throttled attempt in the one suspension.
  const throttled = zoo.mx.throttled;
  const perConnection = new Map<string, number>();
  for (const r of throttled.refusals) perConnection.set(r.session, (perConnection.get(r.session) ?? 0) + 1);
  assert.ok(throttled.refusals.length >= 1 && throttled.refusals.length <= 2, `${throttled.refusals.length} throttle replies`);
  assert.ok([...perConnection.values()].every((n) => n === 1), `throttle replies per connection: ${JSON.stringify([...perConnection.values()])}`);
  const firstThrottle = throttled.refusals[0].at;
  assert.ok(Math.min(...throttled.accepted.map((a) => a.at)) - firstThrottle >= 2_500, 'retried only after the 3 s suspension');
  // The rest flowed meanwhile: the fast receiver had all its mail before the throttled one resumed.
  const rel = (ts: number[]) => ts.map((t) => t - firstThrottle).sort((a, b) => a - b);
  assert.ok(Math.max(...zoo.mx.fast.accepted.map((a) => a.at)) < Math.min(...throttled.accepted.map((a) => a.at)), `fast ${rel(zoo.mx.fast.accepted.map((a) => a.at))} throttled ${rel(throttled.accepted.map((a) => a.at))} refusals ${rel(throttled.refusals.map((a) => a.at))}`);

  const bad = await env.pool.query(`SELECT type, count(*)::int AS n FROM events WHERE type IN ('hard_bounce', 'soft_bounce') GROUP BY type`);
  assert.deepEqual(bad.rows, [], 'no bounce events');
  assert.equal((await env.pool.query('SELECT count(*)::int AS n FROM suppressions')).rows[0].n, 0, 'nothing suppressed');
  const reasons = await env.pool.query(
    `SELECT m.to_domain, e.data->>'reason' AS reason, count(*)::int AS n FROM events e JOIN messages m ON m.id = e.message_id
      WHERE e.type = 'deferred' GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  assert.deepEqual(reasons.rows.filter((r) => r.to_domain === 'grey.example'), [{ to_domain: 'grey.example', reason: 'greylisted', n: COUNTS.grey }]);
  assert.ok(reasons.rows.some((r) => r.to_domain === 'throttled.example' && r.reason === 'throttled'));
  assert.ok(reasons.rows.every((r) => r.reason !== 'backoff'), JSON.stringify(reasons.rows));
  // `postline delivery status --json` shows every destination with its limits and the throttle.
  const cli = await runCli(['delivery', 'status', '--json'], {
    DATABASE_URL: env.dbUrl, POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-zoo-cli-')), POSTLINE_SECRET: env.config.secret,
    POSTLINE_FBL_SECRET: 'fbl_test-secret-0123456789', POSTLINE_DELIVERY_POLICY: policyPath, LOG_LEVEL: 'silent',
  });
  assert.equal(cli.code, 0, cli.stderr);
  const status = JSON.parse(cli.stdout) as { generatedAt: string; sources: unknown[]; data: { name: string; limits: Record<string, unknown>; lastThrottleReply: string | null; sentLastMinute: number; connections: number }[] };
  assert.deepEqual(status.sources, [], 'a policy without sources');
  const byName = new Map(status.data.map((d) => [d.name, d]));
  assert.deepEqual(byName.get('conncap')!.limits, { maxConnections: 2, messagesPerMinute: null, messagesPerConnection: 5 });
  assert.deepEqual(byName.get('ratecap')!.limits, { maxConnections: 3, messagesPerMinute: 300, messagesPerConnection: 100 });
  assert.match(byName.get('throttled')!.lastThrottleReply!, /TSS04/);
  assert.ok(byName.has('mx:mx1.fast.zoo.test'), [...byName.keys()].join());
  assert.ok(byName.get('ratecap')!.sentLastMinute >= 25, JSON.stringify(byName.get('ratecap')));
});
