/**
 * bench/tracking: redirects/s and latency of GET /t/c/{token} (verify the HMAC token, insert
 * the click event in one statement, 302) under concurrent load, against the production build
 * running as its own process (`postline start --role api`) on a scratch embedded PostgreSQL.
 * The messages are real rows accepted through POST /api/v1/emails (8 KB of HTML each); the
 * requests rotate over their click links. Afterwards the click events are counted, so a
 * redirect that recorded nothing cannot inflate the figure. With `--campaign` the messages
 * belong to a campaign (created through the API, its rows attached in the setup), so every
 * click also updates the campaign's counters, hourly timeline and link table: the burst a
 * campaign's readers cause.
 *
 *   npm run bench:tracking -- [--connections 50] [--duration 10] [--messages 50] [--campaign]
 */
import autocannon from 'autocannon';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/domain/accounts.js';
import { createApiKey } from '../src/domain/keys/api-keys.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../src/domain/domains/domains.js';
import { TrackingLinks } from '../src/domain/tracking/links.js';
import { startCluster } from './lib/server.js';

const { values } = parseArgs({
  options: { connections: { type: 'string', default: '50' }, duration: { type: 'string', default: '10' }, messages: { type: 'string', default: '50' }, campaign: { type: 'boolean', default: false } },
});
const cluster = await startCluster(['api'], { POSTLINE_DELIVERY: 'capture' });
const { config } = cluster;
const base = `http://127.0.0.1:${cluster.port}`;

// An account with a verified domain, and messages accepted through the API.
const db = cluster.db;
const account = await createAccount(db.pool, { name: 'bench' });
const { key } = await createApiKey(db.pool, { accountId: account.id, mode: 'live' });
const domain = await createDomain(db.pool, { accountId: account.id, name: 'bench.example', now: new Date() }, { secret: config.secret, targets: dnsTargetsOf(config) });
await forceVerifyDomain(db.pool, domain.id, new Date());
const html = `<html><body>${'<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</p>\n'.repeat(90)}</body></html>`;
const links = new TrackingLinks(config);
/** POSTs to the API with the bench's key; throws unless it answers `expect`. */
async function post(path: string, body: unknown, expect: number): Promise<{ id: string }> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  if (res.status !== expect) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { id: string };
}
const paths: string[] = [];
for (let i = 0; i < Number(values.messages); i++) {
  const { id } = await post('/api/v1/emails', { to: `reader${i}@example.net`, from: { email: 'news@bench.example' }, subject: 'Bench', html }, 202);
  for (const url of [`https://bench.example/article/${i}?utm_source=postline&utm_medium=email`, `https://bench.example/shop?item=${i}&ref=mail#buy`]) {
    paths.push(new URL(links.click(id, url, null)).pathname);
  }
}

let campaignId: string | null = null;
if (values.campaign) {
  const list = await post('/api/v1/lists', { name: 'readers' }, 201);
  campaignId = (await post('/api/v1/campaigns', { name: 'Bench', subject: 'Bench', from: { email: 'news@bench.example' }, html, audience: { lists: [list.id] } }, 201)).id;
  await db.pool.query(`UPDATE messages SET campaign_id = $1 WHERE account_id = $2`, [campaignId, account.id]);
}

let next = 0;
const connections = Number(values.connections);
const duration = Number(values.duration);
process.stdout.write(`GET /t/c/{token} against 'postline start --role api', ${connections} connections, ${duration}s, ${paths.length} links${values.campaign ? ' of campaign messages' : ''}, node ${process.version}\n`);
const result = await autocannon({
  url: base,
  connections,
  duration,
  requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }) }],
});
const redirects = result['3xx'];
const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE type = 'click'`);
const counted = campaignId
  ? (await db.pool.query<{ n: number }>(`SELECT coalesce(sum(clicks), 0)::int AS n FROM campaign_stats WHERE campaign_id = $1`, [campaignId])).rows[0].n
  : null;
process.stdout.write(
  [
    `redirects/s avg ${(redirects / duration).toFixed(0)}  (302s ${redirects}, other ${result.requests.total - redirects}, errors ${result.errors}, timeouts ${result.timeouts})`,
    `latency ms  p50 ${result.latency.p50}  p90 ${result.latency.p90}  p99 ${result.latency.p99}  max ${result.latency.max}`,
    `click events recorded ${rows[0].n}${counted === null ? '' : `, counted in the campaign's report ${counted}`}`,
  ].join('\n') + '\n',
);
await cluster.stop();
