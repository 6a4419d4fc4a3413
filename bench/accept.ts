/**
 * bench/accept: what one accepted POST /api/v1/emails costs in CPU, in the API process and in
 * the PostgreSQL it writes to (both share the machine's cores). The request is bench:delivery's:
 * ~4 KB HTML template, per-message variables, a new recipient each time, 32 connections, a live
 * key. Only the accept phase is counted: CPU is read from /proc before and after it, after a
 * warm-up, so the process's start (module loading, migrations) is not in the figure.
 *
 *   npm run bench:accept -- [--messages 6000] [--connections 32] [--warmup 500] [--floor]
 *
 * `--floor` sends GET /api/v1/me instead (key check, rate-limit count, a small JSON answer):
 * what any authenticated request costs, the part of an accept that is not the send's own.
 *
 * PostgreSQL's CPU is the postmaster's and every backend's (bench/lib/server.ts): live processes by their
 * own counters, exited ones through the postmaster's reaped-children counters.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ORDER_HTML, orderSender } from './lib/order-mail.js';
import { startCluster } from './lib/server.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '6000' }, connections: { type: 'string', default: '32' }, warmup: { type: 'string', default: '500' },
    floor: { type: 'boolean', default: false },
  },
});
const total = Number(values.messages);
const connections = Number(values.connections);
const warmup = Number(values.warmup);

const TICKS = 100; // USER_HZ

/** [user, system] CPU seconds of a pid (its reaped children's included with `children`). */
function userSystemOf(pid: number, children: boolean): [number, number] {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return [(Number(f[11]) + (children ? Number(f[13]) : 0)) / TICKS, (Number(f[12]) + (children ? Number(f[14]) : 0)) / TICKS];
  } catch {
    return [0, 0]; // exited between listing and reading: counted by its parent once reaped
  }
}

const cluster = await startCluster(['api']);
// What the process used to start (module loading, migrations, schema compilation): not an accept's cost.
const startCpu = cluster.cpuSeconds()[0];
const pool = cluster.db.pool;
const key = await orderSender(cluster);

const html = ORDER_HTML;

/** Sends `count` messages over `connections` connections; returns [accepted, refused]. */
async function sendAll(from: number, count: number): Promise<[number, number]> {
  let next = from;
  let ok = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < from + count) {
        const i = next++;
        const res = values.floor
          ? await fetch(`http://127.0.0.1:${cluster.port}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })
          : await fetch(`http://127.0.0.1:${cluster.port}/api/v1/emails`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ to: `user${i}@example.net`, from: { email: 'shop@bench.test', name: 'Shop' }, subject: 'Order {{ order }} shipped', html, variables: { name: `User ${i}`, order: `A-${i}` } }),
          });
        const body = (await res.json()) as { id?: string };
        if (res.status === (values.floor ? 200 : 202) && (values.floor || body.id)) ok++;
        else refused++;
      }
    }),
  );
  return [ok, refused];
}

const commits = async () => (await pool.query(`SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0].n as number;
/** Connections PostgreSQL has accepted so far (each one a backend started and a SCRAM exchange). */
const sessions = async () => (await pool.query(`SELECT sessions::bigint AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0].n as number;

process.stdout.write(`${values.floor ? 'GET /api/v1/me (the floor of an authenticated request)' : `POST /api/v1/emails, ~${Math.round(html.length / 1024)} KB HTML template + variables`}, ${connections} connections, ${warmup} warm-up then ${total} counted, node ${process.version}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
await sendAll(0, warmup);
const apiBefore = cluster.cpuSeconds()[0];
const apiPid = cluster.processes[0].pid!;
const [apiUserBefore, apiSystemBefore] = userSystemOf(apiPid, false);
const pgBefore = cluster.postgresCpuSeconds();
const commitsBefore = await commits();
const sessionsBefore = await sessions();
const t0 = Date.now();
const [ok, refused] = await sendAll(warmup, total);
const seconds = (Date.now() - t0) / 1000;
const apiCpu = cluster.cpuSeconds()[0] - apiBefore;
const [apiUserAfter, apiSystemAfter] = userSystemOf(apiPid, false);
const pgCpu = cluster.postgresCpuSeconds() - pgBefore;
const commitCount = (await commits()) - commitsBefore;
const sessionCount = (await sessions()) - sessionsBefore;
process.stdout.write(
  [
    `accepted     ${(ok / seconds).toFixed(0)}/s  (${ok} in ${seconds.toFixed(1)} s, ${refused} refused)`,
    `cpu api      ${apiCpu.toFixed(2)} s: ${((apiCpu * 1000) / Math.max(1, ok)).toFixed(3)} ms per accepted request (user ${(apiUserAfter - apiUserBefore).toFixed(2)} s, system ${(apiSystemAfter - apiSystemBefore).toFixed(2)} s)`,
    `cpu postgres ${pgCpu.toFixed(2)} s: ${((pgCpu * 1000) / Math.max(1, ok)).toFixed(3)} ms per accepted request`,
    `cpu both     ${(((apiCpu + pgCpu) * 1000) / Math.max(1, ok)).toFixed(3)} ms per accepted request`,
    `database     ${(commitCount / Math.max(1, ok)).toFixed(3)} commits per accepted request`,
    `connections  ${sessionCount} opened to PostgreSQL while counting (a backend started and a SCRAM exchange each)`,
    `rss api      ${cluster.peakRssMb()[0].toFixed(0)} MB peak`,
    `start-up     ${startCpu.toFixed(2)} s of API CPU before the first request (not counted above)`,
    `load         ${loadavg().map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min) at the end`,
  ].join('\n') + '\n',
);
await cluster.stop();
