/**
 * bench/send-api: accepted live sends per second and latency of POST /api/v1/emails under
 * concurrent load (production build, `--role api`, so no delivery competes), next to the raw
 * single-row INSERT rate of the same PostgreSQL at the same concurrency, measured in the same
 * run. Target: the API reaches at least 50% of the raw insert rate.
 *
 *   npm run bench:send-api -- [--connections 32] [--duration 10]
 */
import autocannon from 'autocannon';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/domain/accounts.js';
import { createApiKey } from '../src/domain/keys/api-keys.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../src/domain/domains/domains.js';
import { startCluster } from './lib/server.js';

const { values } = parseArgs({ options: { connections: { type: 'string', default: '32' }, duration: { type: 'string', default: '10' } } });
const connections = Number(values.connections);
const duration = Number(values.duration);

const cluster = await startCluster(['api']);
const pool = cluster.db.pool;
const account = await createAccount(pool, { name: 'bench' });
const key = (await createApiKey(pool, { accountId: account.id, mode: 'live' })).key;
const domain = await createDomain(pool, { accountId: account.id, name: 'bench.test', now: new Date() }, { secret: cluster.config.secret, targets: dnsTargetsOf(cluster.config) });
await forceVerifyDomain(pool, domain.id, new Date());

// The reference: single-row 2 KB INSERTs, one per statement (autocommit, fsync on), from the
// same number of concurrent clients as the HTTP load.
await pool.query('CREATE TABLE bench_raw (id bigserial PRIMARY KEY, body text NOT NULL)');
const body2k = 'x'.repeat(2048);
let rawCount = 0;
const rawDeadline = Date.now() + duration * 1000;
const { createPool } = await import('../src/db/pool.js');
const rawPool = createPool(cluster.db.url, connections);
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (Date.now() < rawDeadline) {
      await rawPool.query('INSERT INTO bench_raw (body) VALUES ($1)', [body2k]);
      rawCount++;
    }
  }),
);
await rawPool.end();
const rawRate = rawCount / duration;

// A different recipient on every request (rotating over RECIPIENTS), as real traffic has:
// per-address work (parsing, the suppression lookup) is not served from a repeat.
const RECIPIENTS = 20_000;
const emailTo = (to: string) => JSON.stringify({
  to,
  from: { email: 'hello@bench.test', name: 'Bench' },
  subject: 'Your order {{ order }} has shipped',
  html: '<p>Hello {{ name | there }},</p><p>Order {{ order }} is on its way. <a href="https://bench.test/track?o={{ order }}">Track it</a>.</p>' + '<p>Lorem ipsum dolor sit amet.</p>'.repeat(40),
  variables: { name: 'Ada', order: 'A-1001' },
});
const bodies = Array.from({ length: RECIPIENTS }, (_, i) => emailTo(`reader${i}@example.net`));
let next = 0;
process.stdout.write(`POST /api/v1/emails against 'postline start --role api', ${connections} connections, ${duration}s, ~${Math.round(bodies[0].length / 1024)} KB body, ${RECIPIENTS} recipients in turn, node ${process.version}\n`);
// Commits (every statement outside a transaction is one) per accepted request: how well the
// accept path's group commits batch (docs/benchmarks.md).
const commits = async () => (await pool.query(`SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0].n as number;
const commitsBefore = await commits();
const result = await autocannon({
  url: `http://127.0.0.1:${cluster.port}/api/v1/emails`,
  method: 'POST',
  connections,
  duration,
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  requests: [{ setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }],
});
const commitsDuring = (await commits()) - commitsBefore;
const accepted = (await pool.query(`SELECT count(*)::int AS n FROM messages`)).rows[0].n as number;
const apiRate = result.requests.average;
process.stdout.write(
  [
    `raw INSERT  ${rawRate.toFixed(0)}/s  (${connections} clients, 2 KB rows, same PostgreSQL)`,
    `send API    ${apiRate.toFixed(0)} accepted/s  (total ${result.requests.total}, stored ${accepted}, non-2xx ${result.non2xx}, errors ${result.errors})`,
    `latency ms  p50 ${result.latency.p50}  p90 ${result.latency.p90}  p99 ${result.latency.p99}  max ${result.latency.max}`,
    `database    ${(commitsDuring / Math.max(1, result.requests.total)).toFixed(2)} commits per request (all connections to the database, the bench's own included)`,
    `ratio       ${((apiRate / rawRate) * 100).toFixed(0)}% of the raw insert rate (target ≥ 50%)`,
  ].join('\n') + '\n',
);
await cluster.stop();
