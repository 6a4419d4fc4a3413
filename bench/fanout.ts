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
import { runFanOut } from '../src/domain/campaigns/fanout.js';
import { createBenchAudience } from './lib/audience.js';
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
  const { listId, call } = await createBenchAudience(cluster, total);
  process.stdout.write(`${total} subscribers, ${runs} campaigns, ${workers} fan-out runners, node ${process.version}\n`);
  for (let run = 1; run <= runs; run++) {
    const campaign = await call('POST', '/api/v1/campaigns', {
      name: `Bench ${run}`, subject: 'News for {{ subscriber.name | you }}', from: { email: 'news@bench.test' }, html: '<p>Hi {{ subscriber.name }}</p>', audience: { lists: [listId] },
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
