/**
 * bench/http-baseline: requests/s and latency of GET /api/v1/me (key lookup + shared
 * rate-limit counter in one database round trip) under concurrent load, against the
 * production build running as its own process (`postline start --role api`) on a scratch
 * embedded PostgreSQL. Load comes from autocannon in this process. Requests rotate over many
 * accounts so that the 600/min limit never answers instead of the request path.
 *
 *   npm run bench:http-baseline -- [--connections 50] [--duration 10]
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { freePort } from '../src/db/embedded.js';
import { openDatabase } from '../src/db/open.js';
import { createAccount } from '../src/domain/accounts.js';
import { createApiKey } from '../src/domain/apiKeys.js';

const { values } = parseArgs({ options: { connections: { type: 'string', default: '50' }, duration: { type: 'string', default: '10' } } });
const dataDir = mkdtempSync(join(tmpdir(), 'postline-bench-'));
const port = await freePort();
const env = { ...process.env, POSTLINE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };

const server = spawn(process.execPath, ['dist/bin/postline.js', 'start', '--role', 'api'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise<void>((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    if (out.includes('postline ready')) resolve();
  });
  server.on('exit', (code) => reject(new Error(`server exited ${code}`)));
});

const db = await openDatabase(loadConfig(env), { owner: false, poolSize: 4 });
const keys: string[] = [];
for (let i = 0; i < 400; i++) {
  const account = await createAccount(db.pool, { name: `bench ${i}` });
  keys.push((await createApiKey(db.pool, { accountId: account.id, mode: 'live' })).key);
}
await db.close();

let next = 0;
const connections = Number(values.connections);
const duration = Number(values.duration);
process.stdout.write(`GET /api/v1/me against 'postline start --role api', ${connections} connections, ${duration}s, node ${process.version}\n`);
const result = await autocannon({
  url: `http://127.0.0.1:${port}/api/v1/me`,
  connections,
  duration,
  requests: [{ setupRequest: (req) => ({ ...req, headers: { authorization: `Bearer ${keys[next++ % keys.length]}` } }) }],
});
process.stdout.write(
  [
    `requests/s  avg ${result.requests.average.toFixed(0)}  (total ${result.requests.total}, non-2xx ${result.non2xx}, errors ${result.errors})`,
    `latency ms  p50 ${result.latency.p50}  p90 ${result.latency.p90}  p99 ${result.latency.p99}  max ${result.latency.max}`,
  ].join('\n') + '\n',
);
server.kill('SIGINT');
await new Promise((r) => server.once('exit', r));
rmSync(dataDir, { recursive: true, force: true });
