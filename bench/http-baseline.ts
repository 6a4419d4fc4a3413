/**
 * bench/http-baseline: requests/s and latency of GET /api/v1/me (key lookup + shared
 * rate-limit counter in one database round trip) under concurrent load, against the
 * production build running as its own process (`postline start --role api`) on a scratch
 * embedded PostgreSQL (bench/lib/server.ts lifts the rate limit so it never answers instead).
 *
 *   npm run bench:http-baseline -- [--connections 50] [--duration 10]
 */
import autocannon from 'autocannon';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/domain/accounts.js';
import { createApiKey } from '../src/domain/keys/api-keys.js';
import { startCluster } from './lib/server.js';

const { values } = parseArgs({ options: { connections: { type: 'string', default: '50' }, duration: { type: 'string', default: '10' } } });
const connections = Number(values.connections);
const duration = Number(values.duration);

const cluster = await startCluster(['api']);
const account = await createAccount(cluster.db.pool, { name: 'bench' });
const { key } = await createApiKey(cluster.db.pool, { accountId: account.id, mode: 'live' });

process.stdout.write(`GET /api/v1/me against 'postline start --role api', ${connections} connections, ${duration}s, node ${process.version}\n`);
const result = await autocannon({
  url: `http://127.0.0.1:${cluster.port}/api/v1/me`,
  connections,
  duration,
  headers: { authorization: `Bearer ${key}` },
});
process.stdout.write(
  [
    `requests/s  avg ${result.requests.average.toFixed(0)}  (total ${result.requests.total}, non-2xx ${result.non2xx}, errors ${result.errors})`,
    `latency ms  p50 ${result.latency.p50}  p90 ${result.latency.p90}  p99 ${result.latency.p99}  max ${result.latency.max}`,
  ].join('\n') + '\n',
);
await cluster.stop();
