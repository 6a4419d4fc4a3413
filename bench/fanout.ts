/**
 * bench/fanout: the fan-out alone, in this process, without delivery (the part of
 * bench:campaign's "fully queued" that the fan-out itself costs). A list of `--subscribers`
 * active subscribers; `--runs` campaigns to it, each sent and fanned out by `--workers`
 * fan-out runners at once (as that many worker processes would), timed from the first claim to
 * the end of the fan-out.
 *
 *   npm run bench:fanout -- [--subscribers 30000] [--runs 3] [--workers 2]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/domain/accounts.js';
import { createApiKey } from '../src/domain/keys/api-keys.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../src/domain/domains/domains.js';
import { runFanOut } from '../src/domain/campaigns/fanout.js';
import { startCluster } from './lib/server.js';

const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '30000' },
    runs: { type: 'string', default: '3' },
    workers: { type: 'string', default: '2' },
  },
});
const total = Number(values.subscribers);
const runs = Number(values.runs);
const workers = Number(values.workers);
const load = () => `(load average ${loadavg().map((l) => l.toFixed(2)).join(', ')})`;

const cluster = await startCluster(['api']);
const pool = cluster.db.pool;
try {
  const account = await createAccount(pool, { name: 'bench' });
  const key = (await createApiKey(pool, { accountId: account.id, mode: 'live' })).key;
  const domain = await createDomain(pool, { accountId: account.id, name: 'bench.test', now: new Date() }, { secret: cluster.config.secret, targets: dnsTargetsOf(cluster.config) });
  await forceVerifyDomain(pool, domain.id, new Date());
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${cluster.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const list = await call('POST', '/api/v1/lists', { name: 'Everyone' });
  await pool.query(
    `WITH s AS (
       INSERT INTO subscribers (id, account_id, email, email_key, name, status, attributes, created_at, updated_at)
       SELECT 'sub_' || lpad(to_hex(g), 32, '0'), $1, 'user' || g || '@example.net', 'user' || g || '@example.net', 'User ' || g, 'active',
              jsonb_build_object('plan', CASE WHEN g % 3 = 0 THEN 'pro' END), now(), now()
         FROM generate_series(1, $2::int) g
       RETURNING id)
     INSERT INTO subscriber_lists (list_id, subscriber_id, account_id, created_at) SELECT $3, id, $1, now() FROM s`,
    [account.id, total, list.id],
  );
  await pool.query('VACUUM ANALYZE subscribers, subscriber_lists');
  process.stdout.write(`${total} subscribers, ${runs} campaigns, ${workers} fan-out runners, node ${process.version}\n`);
  for (let run = 1; run <= runs; run++) {
    const campaign = await call('POST', '/api/v1/campaigns', {
      name: `Bench ${run}`, subject: 'News for {{ subscriber.name | you }}', from: { email: 'news@bench.test' }, html: '<p>Hi {{ subscriber.name }}</p>', audience: { lists: [list.id] },
    });
    await call('POST', `/api/v1/campaigns/${campaign.id}/send`);
    const t0 = Date.now();
    // Each runner as a worker's campaign loop: part after part until the fan-out is done (a
    // runner that finds nothing to claim while another splits the audience looks again).
    const fanoutDone = async () => (await pool.query('SELECT fanout_done FROM campaigns WHERE id = $1', [campaign.id])).rows[0].fanout_done;
    const runner = async () => {
      let n = 0;
      while (!(await fanoutDone())) {
        const r = await runFanOut({ pool, now: () => new Date(), quotaOf: async () => null });
        if (r === null) await new Promise((ok) => setTimeout(ok, 10));
        else n += r;
      }
      return n;
    };
    const written = await Promise.all(Array.from({ length: workers }, runner));
    const s = (Date.now() - t0) / 1000;
    const n = written.reduce((a, b) => a + b, 0);
    process.stdout.write(`run ${run}      ${n} messages in ${s.toFixed(2)} s, ${Math.round(n / s)} recipients/s ${load()}\n`);
  }
} finally {
  await cluster.stop();
}
