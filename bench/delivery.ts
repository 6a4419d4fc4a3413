/**
 * bench/delivery: N messages (~4 KB HTML) accepted through POST /api/v1/emails and delivered,
 * DKIM-signed (RSA + Ed25519), by the production build to a loopback SMTP sink found through a
 * loopback DNS server. Prints accepted/s, delivered/s, accept→delivered latency p50/p99, and
 * the peak RSS of each server process. Target on this machine (2 cores): ≥ 1,500 delivered/s.
 *
 * With --split, the workers start only after every message is accepted, so delivered/s is the
 * delivery engine alone rather than delivery competing with the API for the same cores.
 *
 * With --sink PORT, mail goes to a sink that already listens on 127.0.0.1:PORT (Postfix's C
 * `smtp-sink -u nobody -M N+1 127.0.0.1:PORT 1000`), so the sink's CPU is not in this process;
 * arrivals are then read from the messages' delivered_at. Give the sink N+1, not N: with `-M N`
 * it exits on the N-th message's final dot without replying, so the sender sees "Connection
 * closed unexpectedly" and defers a message the sink did count (the Postfix peer's last message
 * meets the same end). Messages still deferred at the end are printed with their replies.
 * `npm run bench:peer` runs the Postfix+OpenDKIM peer and this back to back (bench/peer.ts).
 *
 * The workers' CPU per delivered message is printed twice: with each worker's start-up (its CPU
 * from spawn to "postline ready", also printed) and without it, which is what a further message
 * costs in a worker that runs for long.
 *
 * Besides each server process's CPU it prints the embedded PostgreSQL's (all its processes):
 * on one machine the database's CPU is taken from the same cores as the workers'.
 *
 * The timeline line gives the arrivals per 250 ms from the first: where the rate dips.
 *
 * --same-content sends one content to everyone (a campaign without merge fields) instead of
 * per-message variables.
 *
 *   npm run bench:delivery -- [--messages 20000] [--workers 2] [--connections 32] [--split] [--sink PORT] [--same-content]
 */
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { startDnsServer } from '../test/helpers/dns-server.js';
import { ORDER_HTML, orderSender } from './lib/order-mail.js';
import { percentile, startCluster } from './lib/server.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    workers: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    split: { type: 'boolean', default: false },
    sink: { type: 'string' },
    'same-content': { type: 'boolean', default: false },
  },
});
const externalSink = values.sink !== undefined ? Number(values.sink) : null;
const total = Number(values.messages);
const workers = Number(values.workers);
const connections = Number(values.connections);

// The sink: accepts everything, notes when each message (by its Message-ID) fully arrived.
const arrivals = new Map<string, number>();
let done: () => void = () => {};
const allArrived = new Promise<void>((r) => (done = r));
const sink = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  size: 50 * 1024 * 1024,
  onData(stream, _session, cb) {
    let head = '';
    stream.on('data', (chunk: Buffer) => {
      if (head.length < 4096) head += chunk.toString('latin1');
    });
    stream.on('end', () => {
      const m = /Message-ID:\s*<(msg_[0-9a-f]+)@/i.exec(head);
      if (m && !arrivals.has(m[1])) {
        arrivals.set(m[1], Date.now());
        if (arrivals.size === total) done();
      }
      cb();
    });
  },
});
if (externalSink === null) await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const sinkPort = externalSink ?? (sink.server.address() as { port: number }).port;
const dns = await startDnsServer();
dns.setRecords('example.net', 'MX', [{ exchange: 'mx.example.net', priority: 10 }]);
dns.setRecords('mx.example.net', 'A', ['127.0.0.1']);

const roles = ['api', ...Array(workers).fill('worker')];
const cluster = await startCluster(values.split ? ['api'] : roles, { POSTLINE_DELIVERY: 'mx', POSTLINE_DNS_SERVERS: dns.address, POSTLINE_MX_PORT: String(sinkPort) });
const pool = cluster.db.pool;
const key = await orderSender(cluster);

const html = ORDER_HTML;
process.stdout.write(`${total} messages, ~${Math.round(html.length / 1024)} KB HTML, roles: ${roles.join(' + ')}${values.split ? ' (workers started after accepting)' : ''}, ${connections} API connections, node ${process.version}\n`);

const accepted = new Map<string, number>();
let next = 0;
let failures = 0;
const t0 = Date.now();
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (next < total) {
      const i = next++;
      const res = await fetch(`http://127.0.0.1:${cluster.port}/api/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ to: `user${i}@example.net`, from: { email: 'shop@bench.test', name: 'Shop' }, subject: 'Order {{ order }} shipped', html, variables: values['same-content'] ? { name: 'friend', order: 'A-1' } : { name: `User ${i}`, order: `A-${i}` } }),
      });
      const body = (await res.json()) as { id?: string };
      if (res.status === 202 && body.id) accepted.set(body.id, Date.now());
      else failures++;
    }
  }),
);
const acceptSeconds = (Date.now() - t0) / 1000;
let deliveryStart = t0;
const pgCpuAtAccept = cluster.postgresCpuSeconds();
if (values.split) {
  deliveryStart = Date.now();
  for (let i = 0; i < workers; i++) await cluster.addProcess('worker');
}
const timeout = setTimeout(() => done(), 600_000);
let lostAtSink = 0;
let deferredReplies = '';
if (externalSink !== null) {
  // The sink is another process: the workers' own record of each delivery says when it arrived.
  // Done when nothing is waiting or in flight: a deferred message retries only after a minute;
  // it is reported with the reply it got, not waited for.
  // EXISTS on the due index rather than a count over the table: the count read every row
  // (html and all) ten times a second, and its CPU counted as PostgreSQL's while delivering.
  for (;;) {
    const { rows } = await pool.query(`SELECT EXISTS (SELECT 1 FROM messages WHERE status IN ('queued', 'sending')) AS busy`);
    if (!rows[0].busy) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const { rows } = await pool.query<{ id: string; at: Date }>(`SELECT id, delivered_at AS at FROM messages WHERE status = 'delivered'`);
  for (const r of rows) arrivals.set(r.id, r.at.getTime());
  const deferred = await pool.query<{ reply: string; n: number }>(`SELECT coalesce(last_response, '') AS reply, count(*)::int AS n FROM messages WHERE status = 'deferred' GROUP BY 1`);
  deferredReplies = deferred.rows.map((r) => `${r.n} × "${r.reply}"`).join(', ');
  lostAtSink = accepted.size - arrivals.size;
  done();
}
await allArrived;
clearTimeout(timeout);
const times = [...arrivals.values()];
const firstArrival = Math.min(...times);
const lastArrival = Math.max(...times);
const latencies = [...accepted.entries()].filter(([id]) => arrivals.has(id)).map(([id, at]) => arrivals.get(id)! - at).sort((a, b) => a - b);
// Arrivals per TIMELINE_MS: a rate that is not CPU-bound shows where the workers wait (a
// near-stall at start, dips mid-run) that the average hides.
const TIMELINE_MS = 250;
function timeline(at: number[], from: number): number[] {
  const bins: number[] = [];
  for (const t of at) {
    const i = Math.floor((t - from) / TIMELINE_MS);
    while (bins.length <= i) bins.push(0);
    bins[i]++;
  }
  return bins;
}
const rss = cluster.peakRssMb();
// CPU per delivered message is less distorted than the rates by other work on a shared machine.
const cpu = cluster.cpuSeconds();
const workerCpu = cpu.slice(1).reduce((a, b) => a + b, 0);
// Each worker's CPU up to "postline ready" (module loading, migrations check, loops started):
// the figure without it is what each further message costs in a worker that runs for long.
const startup = cluster.startupCpuSeconds();
const workerStartup = startup.slice(1).reduce((a, b) => a + b, 0);
const pgCpu = cluster.postgresCpuSeconds();
// With --split the accepts came before the workers: PostgreSQL's CPU from then on is delivery's.
const pgDelivery = values.split ? pgCpu - pgCpuAtAccept : pgCpu;
process.stdout.write(
  [
    `accepted     ${(accepted.size / acceptSeconds).toFixed(0)}/s  (${accepted.size} in ${acceptSeconds.toFixed(1)} s, ${failures} refused)`,
    `delivered    ${(arrivals.size / ((lastArrival - firstArrival) / 1000)).toFixed(0)}/s between first and last arrival; ${(arrivals.size / ((lastArrival - deliveryStart) / 1000)).toFixed(0)}/s from ${values.split ? 'worker start' : 'the first accept'} (${arrivals.size} in ${((lastArrival - deliveryStart) / 1000).toFixed(1)} s)`,
    `end to end   ${(arrivals.size / ((lastArrival - t0) / 1000)).toFixed(0)} msg/s from the first accept to the last delivery${lostAtSink ? ` (${lostAtSink} not delivered; deferred: ${deferredReplies || 'none'})` : ''}`,
    `latency ms   accept→delivered p50 ${percentile(latencies, 50)}  p99 ${percentile(latencies, 99)}`,
    `peak RSS MB  ${roles.map((r, i) => `${r} ${rss[i]}`).join(', ')}`,
    `cpu s        ${roles.map((r, i) => `${r} ${cpu[i].toFixed(1)}`).join(', ')}; workers ${((workerCpu * 1000) / Math.max(1, arrivals.size)).toFixed(2)} ms per delivered message`,
    `start-up cpu ${roles.map((r, i) => `${r} ${startup[i].toFixed(2)}`).join(', ')} s (spawn to ready); workers ${(((workerCpu - workerStartup) * 1000) / Math.max(1, arrivals.size)).toFixed(2)} ms per delivered message excluding their start-up`,
    `timeline     ${timeline(times, firstArrival).join(' ')}  (arrivals per ${TIMELINE_MS} ms from the first)`,
    `postgres cpu ${pgCpu.toFixed(1)} s in all${values.split ? `, ${pgCpuAtAccept.toFixed(1)} s up to the last accept, ${pgDelivery.toFixed(1)} s while delivering` : ''}; ${((pgDelivery * 1000) / Math.max(1, arrivals.size)).toFixed(2)} ms per delivered message${values.split ? '' : ' (accept included)'}`,
  ].join('\n') + '\n',
);
await cluster.stop();
await dns.close();
if (externalSink === null) sink.close();
