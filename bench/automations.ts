/**
 * bench/automations: POST /api/v1/automations/trigger at a fixed arrival rate (open loop: a
 * request leaves on schedule whether or not earlier ones answered, so slow answers show up as
 * latency instead of a lower rate), then every run through "wait → send" once its wait
 * expires. Production build, `--role api` and `--role worker` as separate processes, embedded
 * PostgreSQL, POSTLINE_DELIVERY=capture (the queued mail is captured, not sent).
 * Target: p99 ≤ 50 ms at 500 triggers/s.
 *
 *   npm run bench:automations -- [--triggers 10000] [--rate 500] [--wait 30s]
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/domain/accounts.js';
import { createApiKey } from '../src/domain/keys/api-keys.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../src/domain/domains/domains.js';
import { parseDuration } from '../src/domain/automations/definition.js';
import { freePort } from '../src/db/embedded.js';
import { percentile, startCluster } from './lib/server.js';

const { values } = parseArgs({ options: { triggers: { type: 'string', default: '10000' }, rate: { type: 'string', default: '500' }, wait: { type: 'string', default: '30s' } } });
const total = Number(values.triggers);
const rate = Number(values.rate);
const waitMs = parseDuration(values.wait);
if (!waitMs) throw new Error('--wait must be a duration like 30s');

// Its own inbound SMTP port: another Postline on the machine may hold the default 2525.
const cluster = await startCluster(['api', 'worker'], { POSTLINE_DELIVERY: 'capture', POSTLINE_SMTP_PORT: String(await freePort()) });
const pool = cluster.db.pool;
const account = await createAccount(pool, { name: 'bench' });
const key = (await createApiKey(pool, { accountId: account.id, mode: 'live' })).key;
const domain = await createDomain(pool, { accountId: account.id, name: 'bench.test', now: new Date() }, { secret: cluster.config.secret, targets: dnsTargetsOf(cluster.config) });
await forceVerifyDomain(pool, domain.id, new Date());

const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
function post(path: string, body: unknown): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port: cluster.port, path, method: 'POST', agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const created = await post('/api/v1/automations', {
  name: 'bench welcome',
  trigger: { event: 'bench.signup' },
  steps: [
    { type: 'wait', duration: values.wait },
    { type: 'send', subject: 'Welcome, {{ data.name | friend }}', html: '<p>Hello {{ data.name }}, your plan is {{ data.plan }}.</p><p><a href="https://bench.test/start">Get started</a></p>', from: { email: 'hello@bench.test', name: 'Bench' } },
  ],
  reentry: 'always',
});
if (created.status !== 201) throw new Error(`creating the automation: ${created.status} ${created.body}`);
const automationId = JSON.parse(created.body).id as string;

process.stdout.write(`${total} triggers at ${rate}/s (open loop) against 'postline start --role api' + '--role worker', wait ${values.wait} then send; node ${process.version}; 2 cores shared with other work\n`);
const latencies: number[] = [];
let failed = 0;
let runsStarted = 0;
const t0 = performance.now();
const inflight: Promise<void>[] = [];
for (let i = 0; i < total; i++) {
  const due = t0 + (i * 1000) / rate;
  const ahead = due - performance.now();
  if (ahead > 1) await new Promise((r) => setTimeout(r, ahead));
  inflight.push((async () => {
    const start = performance.now();
    const res = await post('/api/v1/automations/trigger', { event: 'bench.signup', email: `user${i}@example.com`, data: { name: `User ${i}`, plan: i % 2 ? 'pro' : 'free' } });
    latencies.push(performance.now() - start);
    if (res.status !== 202) failed++;
    else runsStarted += JSON.parse(res.body).runs.length;
  })());
}
await Promise.all(inflight);
const triggerSeconds = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);

// Every run: wait, then send. Poll until all completed (progress on stderr).
const deadline = Date.now() + waitMs + 600_000;
let completed = 0;
while (Date.now() < deadline) {
  completed = (await pool.query(`SELECT count(*)::int AS n FROM automation_runs WHERE automation_id = $1 AND status = 'completed'`, [automationId])).rows[0].n;
  process.stderr.write(`\rruns completed ${completed}/${runsStarted}`);
  if (completed >= runsStarted) break;
  await new Promise((r) => setTimeout(r, 500));
}
process.stderr.write('\n');
// From the history: when each wait ended (its wake-up time) and when the send was performed.
const { rows: [h] } = await pool.query(
  `SELECT min(w.at) AS first_due, max(s.at) AS last_sent,
          percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM s.at - (w.detail->>'wakesAt')::timestamptz)) AS lag50,
          percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM s.at - (w.detail->>'wakesAt')::timestamptz)) AS lag99,
          count(*)::int AS sent
     FROM automation_runs r
     JOIN automation_run_steps w ON w.run_id = r.id AND w.outcome = 'waiting'
     JOIN automation_run_steps s ON s.run_id = r.id AND s.outcome = 'sent'
    WHERE r.automation_id = $1`,
  [automationId],
);
const firstWake = new Date(new Date(h.first_due).getTime() + waitMs);
const sendWindow = (new Date(h.last_sent).getTime() - firstWake.getTime()) / 1000;
const messages = (await pool.query('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [account.id])).rows[0].n;
process.stdout.write(
  [
    `triggers     ${(total / triggerSeconds).toFixed(0)}/s offered ${rate}/s  (${total} in ${triggerSeconds.toFixed(1)} s, non-202 ${failed}, runs started ${runsStarted})`,
    `latency ms   p50 ${percentile(latencies, 50).toFixed(1)}  p90 ${percentile(latencies, 90).toFixed(1)}  p99 ${percentile(latencies, 99).toFixed(1)}  max ${latencies[latencies.length - 1].toFixed(1)}  (target p99 ≤ 50 ms)`,
    `runs         ${completed} completed, ${h.sent} sends, ${messages} messages queued`,
    `completed/s  ${(completed / sendWindow).toFixed(0)}/s from the first wake-up to the last send (${sendWindow.toFixed(1)} s; wake-ups arrive at the trigger rate)`,
    `send lag     p50 ${(Number(h.lag50) * 1000).toFixed(0)} ms  p99 ${(Number(h.lag99) * 1000).toFixed(0)} ms behind each run's wake-up time`,
    `peak RSS MB  api ${cluster.peakRssMb()[0]}  worker ${cluster.peakRssMb()[1]}`,
  ].join('\n') + '\n',
);
agent.destroy();
await cluster.stop();
