/**
 * bench/campaign: a campaign to 100,000 subscribers of one list, ~4 KB HTML with three merge
 * fields and two links, fanned out and delivered by two worker processes (production build) to
 * a loopback SMTP sink found through a loopback DNS server. Prints the time from `send` to
 * fully queued (target ≤ 10 s), delivered/s (target: no slower than bench:delivery --split),
 * peak RSS per process and database bytes per recipient, and how soon a transactional send made
 * during the fan-out is delivered (workers hold only campaign mail while they fan out). Then the read side: p50/p99 of
 * GET /api/v1/campaigns/{id} once the campaign has ~300,000 events, and of GET /api/v1/stats
 * once the account has 1,000,000 events (target ≤ 50 ms each). Last, in the same run, the
 * engine-alone reference the delivered/s target compares with: bench/delivery --split with
 * --reference messages (0 leaves it out).
 *
 *   npm run bench:campaign -- [--subscribers 100000] [--workers 2] [--requests 500] [--reference 5000]
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { startDnsServer } from '../test/helpers/dns-server.js';
import { createBenchAudience } from './lib/audience.js';
import { percentile, startCluster } from './lib/server.js';

const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '100000' },
    workers: { type: 'string', default: '2' },
    requests: { type: 'string', default: '500' },
    reference: { type: 'string', default: '5000' },
  },
});
const total = Number(values.subscribers);
const workers = Number(values.workers);
const requests = Number(values.requests);
const reference = Number(values.reference);
const load = () => `(load average ${loadavg().map((l) => l.toFixed(2)).join(', ')})`;

let arrived = 0;
// A transactional send made during the fan-out (the engine holds only campaign mail meanwhile):
// when it arrived, so its accept→delivered time can be printed.
const PROBE = 'probe@example.net';
let probeArrived = 0;
let first = 0;
let last = 0;
let done: () => void = () => {};
const allArrived = new Promise<void>((r) => (done = r));
const sink = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  size: 50 * 1024 * 1024,
  onData(stream, session, cb) {
    stream.resume();
    stream.on('end', () => {
      const now = Date.now();
      if (session.envelope.rcptTo.some((r) => r.address === PROBE)) {
        probeArrived = now;
        return cb();
      }
      if (arrived === 0) first = now;
      last = now;
      if (++arrived === total) done();
      cb();
    });
  },
});
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const dns = await startDnsServer();
dns.setRecords('example.net', 'MX', [{ exchange: 'mx.example.net', priority: 10 }]);
dns.setRecords('mx.example.net', 'A', ['127.0.0.1']);

const roles = ['api', ...Array(workers).fill('worker')];
const cluster = await startCluster(roles, {
  POSTLINE_DELIVERY: 'mx',
  POSTLINE_DNS_SERVERS: dns.address,
  POSTLINE_MX_PORT: String((sink.server.address() as { port: number }).port),
});
const pool = cluster.db.pool;
// The audience: one list, `total` active subscribers.
const { accountId, listId, call } = await createBenchAudience(cluster, total);

const html =
  '<html><body><h1>Hello {{ subscriber.name | there }}</h1>' +
  '<p>This month for {{ subscriber.email }} on the {{ subscriber.attributes.plan | free }} plan: <a href="https://bench.test/news">read the news</a> or <a href="https://bench.test/pricing">see pricing</a>.</p>' +
  '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>'.repeat(28) +
  '</body></html>';
const campaign = await call('POST', '/api/v1/campaigns', {
  name: 'Bench', subject: 'News for {{ subscriber.name | you }}', from: { email: 'news@bench.test', name: 'Bench' }, html, audience: { lists: [listId] },
});
const dbBefore = Number((await pool.query('SELECT pg_database_size(current_database()) AS b')).rows[0].b);
process.stdout.write(`${total} subscribers, ~${Math.round(html.length / 1024)} KB HTML, 3 merge fields, 2 links, roles: ${roles.join(' + ')}, node ${process.version}\n`);

const t0 = Date.now();
await call('POST', `/api/v1/campaigns/${campaign.id}/send`);
await new Promise((r) => setTimeout(r, 1000)); // the fan-out is under way
const probeAt = Date.now();
await call('POST', '/api/v1/emails', { from: { email: 'news@bench.test' }, to: PROBE, subject: 'Your receipt', html: '<p>Thanks for your order.</p>' });
let queuedAt = 0;
while (!queuedAt) {
  const { rows } = await pool.query('SELECT fanout_done FROM campaigns WHERE id = $1', [campaign.id]);
  if (rows[0].fanout_done) queuedAt = Date.now();
  else await new Promise((r) => setTimeout(r, 50));
}
process.stdout.write(`queued       ${((queuedAt - t0) / 1000).toFixed(1)} s from send to fully queued (${total} messages; ${arrived} delivered meanwhile) ${load()}\n`);
process.stdout.write(
  `transactional sent 1.0 s into the fan-out: ${probeArrived ? `delivered ${probeArrived - probeAt} ms after its accept, ${probeArrived < queuedAt ? 'before' : 'after'} the campaign was fully queued` : 'not delivered by then'}\n`,
);
const timeout = setTimeout(() => done(), 900_000);
await allArrived;
clearTimeout(timeout);
const rss = cluster.peakRssMb();
const heaps = cluster.peakHeapMb();
const cpu = cluster.cpuSeconds();
const startup = cluster.startupCpuSeconds();
const workerIndexes = roles.flatMap((r, i) => (r === 'worker' ? [i] : []));
const workersCpu = workerIndexes.reduce((sum, i) => sum + cpu[i], 0);
const workersStartup = workerIndexes.reduce((sum, i) => sum + startup[i], 0);
// Let the workers record the last outcomes before measuring the database.
for (let i = 0; i < 100; i++) {
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1 AND status <> 'delivered'`, [campaign.id]);
  if (rows[0].n === 0) break;
  await new Promise((r) => setTimeout(r, 200));
}
await pool.query('CHECKPOINT');
const dbAfter = Number((await pool.query('SELECT pg_database_size(current_database()) AS b')).rows[0].b);
const messagesBytes = Number((await pool.query(`SELECT pg_total_relation_size('messages') AS b`)).rows[0].b);
process.stdout.write(
  [
    `delivered    ${(arrived / ((last - first) / 1000)).toFixed(0)}/s between first and last arrival; ${(arrived / ((last - t0) / 1000)).toFixed(0)}/s from send (${arrived} in ${((last - t0) / 1000).toFixed(1)} s) ${load()}`,
    `peak RSS MB  ${roles.map((r, i) => `${r} ${rss[i]}`).join(', ')}`,
    ...workerIndexes.map((i) => {
      const h = heaps[i];
      return h ? `peak heap MB worker ${i}: young generation ${h.newSpace}, old generation ${h.oldSpace}, heap ${h.heapTotal}, external ${h.external} (ArrayBuffers ${h.arrayBuffers}); V8 heap limit ${h.heapSizeLimit}` : `peak heap MB worker ${i}: not sampled`;
    }),
    `workers CPU  ${((workersCpu / arrived) * 1000).toFixed(3)} ms per delivered message (${((workersCpu - workersStartup) / arrived * 1000).toFixed(3)} without start-up; fan-out included; ${workersCpu.toFixed(1)} s)`,
    `database     ${((dbAfter - dbBefore) / total).toFixed(0)} bytes per recipient (database growth, messages + events + indexes + rollups); messages table ${(messagesBytes / total).toFixed(0)} bytes per row`,
  ].join('\n') + '\n',
);

async function latency(path: string): Promise<{ p50: number; p99: number; load: string }> {
  for (let i = 0; i < 20; i++) await call('GET', path); // warm-up
  const times: number[] = [];
  for (let i = 0; i < requests; i++) {
    const t = performance.now();
    await call('GET', path);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: Number(percentile(times, 50).toFixed(1)), p99: Number(percentile(times, 99).toFixed(1)), load: load() };
}

// ~300,000 events on the campaign: its 200,000 sent + delivered, plus opens and clicks, inserted
// through the events table (so the rollup trigger maintains the counters as in production).
await pool.query(
  `INSERT INTO events (id, account_id, message_id, type, email, url, data, occurred_at)
   SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), account_id, id, 'open', to_email, NULL,
          jsonb_build_object('unique', true, 'machine', (hashtext(id) % 5 = 0)), now()
     FROM messages WHERE campaign_id = $1 AND hashtext(id) % 10 < 7`,
  [campaign.id],
);
await pool.query(
  `INSERT INTO events (id, account_id, message_id, type, email, url, data, occurred_at)
   SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), account_id, id, 'click', to_email,
          CASE WHEN hashtext(id) % 2 = 0 THEN 'https://bench.test/news' ELSE 'https://bench.test/pricing' END, '{}', now()
     FROM messages WHERE campaign_id = $1 AND hashtext(id) % 10 < 3`,
  [campaign.id],
);
const campaignEvents = Number((await pool.query('SELECT count(*) AS n FROM events WHERE campaign_id = $1', [campaign.id])).rows[0].n);
const report = await latency(`/api/v1/campaigns/${campaign.id}`);

// 1,000,000 events on the account: transactional traffic over the last 30 days, in 100,000-row statements.
let accountEvents = Number((await pool.query('SELECT count(*) AS n FROM events WHERE account_id = $1', [accountId])).rows[0].n);
while (accountEvents < 1_000_000) {
  const n = Math.min(100_000, 1_000_000 - accountEvents);
  await pool.query(
    `INSERT INTO events (id, account_id, message_id, type, email, url, data, occurred_at)
     SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), $1, NULL,
            (ARRAY['sent','delivered','open','click','hard_bounce','deferred'])[1 + g % 6], 'user' || g || '@example.net',
            NULL, '{}', now() - make_interval(secs => (g % (30 * 86400)))
       FROM generate_series(1, $2::int) g`,
    [accountId, n],
  );
  accountEvents += n;
}
const stats = await latency('/api/v1/stats');
process.stdout.write(
  [
    `report       GET /api/v1/campaigns/{id} with ${campaignEvents} campaign events: p50 ${report.p50} ms  p99 ${report.p99} ms (${requests} sequential requests) ${report.load}`,
    `stats        GET /api/v1/stats with ${accountEvents} account events: p50 ${stats.p50} ms  p99 ${stats.p99} ms (${requests} sequential requests) ${stats.load}`,
  ].join('\n') + '\n',
);
await cluster.stop();
await dns.close();
sink.close();

// The delivered/s target's reference, in the same run: the delivery engine alone (bench/delivery --split).
if (reference > 0) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/delivery.ts', '--messages', String(reference), '--workers', String(workers), '--split'], { encoding: 'utf8' });
  const line = /^delivered .*$/m.exec(r.stdout)?.[0];
  process.stdout.write(line ? `reference    bench/delivery --split, ${reference} messages: ${line.replace(/^delivered\s+/, '')} ${load()}\n` : `reference    bench/delivery failed: ${r.stderr.slice(-500)}\n`);
}
