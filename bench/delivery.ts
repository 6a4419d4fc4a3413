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
 * The load generator is undici's Pool: POST /api/v1/emails with the header fields fetch sends
 * (its own defaults included) and the same JSON body for each message, over `--connections` keep-alive connections (32), one request in flight on
 * each. Until decision 0056 it was fetch over the same 32 connections: the same requests, three
 * times this process's CPU (printed as `bench client`), taken from the two cores the server
 * runs on. `--client fetch` runs the old client. `postgres wal` is the WAL written per message.
 *
 * --same-content sends one content to everyone (a campaign without merge fields) instead of
 * per-message variables.
 *
 *   npm run bench:delivery -- [--messages 20000] [--workers 2] [--connections 32] [--split] [--sink PORT] [--same-content] [--client undici|fetch]
 */
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { Pool } from 'undici';
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
    client: { type: 'string', default: 'undici' },
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
// WAL written per message (pg_current_wal_lsn before and after): PostgreSQL's own cost beyond
// CPU, and what changes when rows, indexes or TOAST storage change.
const walLsn = async (): Promise<string> => (await pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
const walBytes = async (from: string, to: string): Promise<number> =>
  Number((await pool.query<{ n: string }>('SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn) AS n', [from, to])).rows[0].n);
const walAtStart = await walLsn();
// This process's own CPU over the accept phase (the HTTP client, JSON): on one machine the
// load generator takes cores from the server it measures, so it is printed beside theirs.
const clientCpuAtStart = process.cpuUsage();
const t0 = Date.now();
// The load generator: undici's Pool (32 keep-alive connections, one request at a time on
// each) rather than fetch, which is built on the same client but adds WHATWG Request/Response/
// Headers/stream objects per call: ~0.45 ms of this process's CPU per request against ~0.15 ms,
// taken from the two cores the server shares with it (docs/benchmarks.md, decision 0056). The requests are
// the same either way: same method, path, header fields and JSON body, over `connections`
// connections. `--client fetch` keeps the old client for comparison.
const client = values.client === 'fetch' ? null : new Pool(`http://127.0.0.1:${cluster.port}`, { connections, pipelining: 1 });
// The header fields fetch adds of its own (Node 20 and 24 alike), sent by the Pool too: the
// server does the same work for each request whichever client sent it.
const FETCH_DEFAULT_HEADERS = { accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'user-agent': 'node', 'accept-encoding': 'gzip, deflate' };
async function post(body: string): Promise<{ status: number; id?: string }> {
  if (client === null) {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const res = await fetch(`http://127.0.0.1:${cluster.port}/api/v1/emails`, { method: 'POST', headers, body });
    const { id } = (await res.json()) as { id?: string };
    return { status: res.status, id };
  }
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...FETCH_DEFAULT_HEADERS };
  const res = await client.request({ method: 'POST', path: '/api/v1/emails', headers, body });
  const { id } = (await res.body.json()) as { id?: string };
  return { status: res.statusCode, id };
}
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (next < total) {
      const i = next++;
      const res = await post(
        JSON.stringify({ to: `user${i}@example.net`, from: { email: 'shop@bench.test', name: 'Shop' }, subject: 'Order {{ order }} shipped', html, variables: values['same-content'] ? { name: 'friend', order: 'A-1' } : { name: `User ${i}`, order: `A-${i}` } }),
      );
      if (res.status === 202 && res.id) accepted.set(res.id, Date.now());
      else failures++;
    }
  }),
);
await client?.close();
const acceptSeconds = (Date.now() - t0) / 1000;
const clientCpuUse = process.cpuUsage(clientCpuAtStart);
const clientCpu = (clientCpuUse.user + clientCpuUse.system) / 1e6;
const walAtAccept = await walLsn();
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
const walAtEnd = await walLsn();
const walAccept = await walBytes(walAtStart, walAtAccept);
const walAll = await walBytes(walAtStart, walAtEnd);
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
    `bench client ${clientCpu.toFixed(1)} s CPU over the accept phase, ${((clientCpu * 1000) / Math.max(1, accepted.size)).toFixed(3)} ms per accepted request (this process: ${values.client === 'fetch' ? 'fetch' : 'undici Pool'} over ${connections} connections)`,
    `latency ms   accept→delivered p50 ${percentile(latencies, 50)}  p99 ${percentile(latencies, 99)}`,
    `peak RSS MB  ${roles.map((r, i) => `${r} ${rss[i]}`).join(', ')}`,
    `cpu s        ${roles.map((r, i) => `${r} ${cpu[i].toFixed(1)}`).join(', ')}; workers ${((workerCpu * 1000) / Math.max(1, arrivals.size)).toFixed(2)} ms per delivered message`,
    `start-up cpu ${roles.map((r, i) => `${r} ${startup[i].toFixed(2)}`).join(', ')} s (spawn to ready); workers ${(((workerCpu - workerStartup) * 1000) / Math.max(1, arrivals.size)).toFixed(2)} ms per delivered message excluding their start-up`,
    `timeline     ${timeline(times, firstArrival).join(' ')}  (arrivals per ${TIMELINE_MS} ms from the first)`,
    `postgres cpu ${pgCpu.toFixed(1)} s in all${values.split ? `, ${pgCpuAtAccept.toFixed(1)} s up to the last accept, ${pgDelivery.toFixed(1)} s while delivering` : ''}; ${((pgDelivery * 1000) / Math.max(1, arrivals.size)).toFixed(2)} ms per delivered message${values.split ? '' : ' (accept included)'}`,
    `postgres wal ${(walAll / 1024 / 1024).toFixed(1)} MB in all; ${values.split ? `${(walAccept / Math.max(1, accepted.size) / 1024).toFixed(2)} KB per accepted message, ${((walAll - walAccept) / Math.max(1, arrivals.size) / 1024).toFixed(2)} KB per delivered message while delivering` : `${(walAll / Math.max(1, arrivals.size) / 1024).toFixed(2)} KB per message (accept and delivery)`}`,
  ].join('\n') + '\n',
);
await cluster.stop();
await dns.close();
if (externalSink === null) sink.close();
