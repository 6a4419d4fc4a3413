/**
 * bench/shaping: N messages over five loopback receivers (a "receiver zoo", each its own
 * provider with its own limits in a delivery policy), delivered by two worker processes of the
 * production build. Every receiver enforces its provider's limits itself: a connection past
 * maxConnections is refused (421 4.7.0), a message past messagesPerMinute in any sliding
 * minute is refused (421-4.7.28); either counts as a violation. The smallest provider's
 * receiver throttles (421 [TSS04]) for a while mid-run; its policy suspends it on that reply.
 *
 * Prints: the time from the workers' start to the last delivery against the least time the
 * per-minute limits allow (the unsuspended providers: n / rate, the largest of them), limit
 * violations, messages bounced or suppressed, and the other providers' throughput while the
 * throttled one is suspended against their rate over the rest of their run.
 *
 *   npm run bench:shaping -- [--messages 20000] [--workers 2] [--rate-scale 1]
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../src/domain/accounts.js';
import { createApiKey } from '../src/domain/keys/api-keys.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../src/domain/domains/domains.js';
import { startDnsServer } from '../test/helpers/dns-server.js';
import { peakInWindow, startZoo } from '../test/helpers/receiver-zoo.js';
import { startCluster } from './lib/server.js';

const { values } = parseArgs({ options: { messages: { type: 'string', default: '20000' }, workers: { type: 'string', default: '2' }, 'rate-scale': { type: 'string', default: '1' } } });
const total = Number(values.messages);
const workers = Number(values.workers);
// On a machine too busy for 300 messages/s, scale every per-minute limit down (the connection limits stay).
const scale = Number(values['rate-scale']);

// Rates sum to 300/s: well inside what two workers deliver on two shared cores, so the limits,
// not the CPU, decide the time. The throttled provider is small enough to finish early even
// with its suspension and the climb back after it.
const PROVIDERS = [
  { name: 'alpha', perMinute: 6000, connections: 10 },
  { name: 'beta', perMinute: 4800, connections: 8 },
  { name: 'gamma', perMinute: 3600, connections: 6 },
  { name: 'delta', perMinute: 2400, connections: 4 },
  { name: 'epsilon', perMinute: 1200, connections: 2, throttled: true },
].map((p) => ({ ...p, perMinute: Math.round(p.perMinute * scale) }));
const SUSPEND_S = 10;
const throttledShare = 0.03;
const unsuspendedRate = PROVIDERS.filter((p) => !p.throttled).reduce((s, p) => s + p.perMinute, 0);
const counts = PROVIDERS.map((p) => (p.throttled ? Math.round(total * throttledShare) : Math.round((total * (1 - throttledShare) * p.perMinute) / unsuspendedRate)));

const policy = {
  default: { greylistRetry: '1m' },
  providers: PROVIDERS.map((p) => ({
    name: p.name, mx: [`*.${p.name}.zoo.test`], maxConnections: p.connections, messagesPerMinute: p.perMinute, messagesPerConnection: 100,
    ...(p.throttled ? { onReply: [{ match: 'TSS04', suspend: `${SUSPEND_S}s` }], rampEvery: '2s' } : {}),
  })),
};
const policyPath = join(mkdtempSync(join(tmpdir(), 'postline-bench-policy-')), 'policy.json');
writeFileSync(policyPath, JSON.stringify(policy));

const zoo = await startZoo(Object.fromEntries(PROVIDERS.map((p) => [p.name, {
  maxConnections: p.connections,
  rate: { n: p.perMinute, windowMs: 60_000 },
  ...(p.throttled ? { throttleAfterMs: 8_000, throttleForMs: 3_000 } : {}),
}])));
const dns = await startDnsServer();
for (const p of PROVIDERS) {
  dns.setRecords(`${p.name}.example`, 'MX', [{ exchange: `mx.${p.name}.zoo.test`, priority: 10 }]);
  dns.setRecords(`mx.${p.name}.zoo.test`, 'A', [zoo.mx[p.name].address]);
}

// SMTP submission on a free port: the bench does not use it, and 2525 may be another process's.
const cluster = await startCluster(['api'], { POSTLINE_DELIVERY: 'mx', POSTLINE_DNS_SERVERS: dns.address, POSTLINE_MX_PORT: String(zoo.port), POSTLINE_DELIVERY_POLICY: policyPath });
const pool = cluster.db.pool;
const account = await createAccount(pool, { name: 'bench' });
const key = (await createApiKey(pool, { accountId: account.id, mode: 'live' })).key;
const domain = await createDomain(pool, { accountId: account.id, name: 'bench.test', now: new Date() }, { secret: cluster.config.secret, targets: dnsTargetsOf(cluster.config) });
await forceVerifyDomain(pool, domain.id, new Date());
process.stdout.write(`${total} messages (rate scale ${scale}) over ${PROVIDERS.length} providers (${PROVIDERS.map((p, i) => `${p.name} ${counts[i]} at ${p.perMinute}/min, ${p.connections} conns${p.throttled ? ', throttles' : ''}`).join('; ')}), ${workers} workers, node ${process.version}\n`);

// Accepted first (batch API), interleaved over the providers; the workers start after.
const all = PROVIDERS.flatMap((p, i) => Array.from({ length: counts[i] }, (_, k) => ({ p: p.name, k })));
all.sort((a, b) => (a.k * 7919) % 1000 - (b.k * 7919) % 1000 || a.p.localeCompare(b.p));
let next = 0;
await Promise.all(Array.from({ length: 8 }, async () => {
  while (next < all.length) {
    const chunk = all.slice(next, next + 100);
    next += 100;
    const emails = chunk.map(({ p, k }) => ({ to: `u${k}@${p}.example`, from: { email: 'shop@bench.test' }, subject: 'Order {{ n }}', html: '<p>Order {{ n }} shipped. <a href="https://bench.test/o">Track</a></p>', variables: { n: k } }));
    const res = await fetch(`http://127.0.0.1:${cluster.port}/api/v1/emails/batch`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ emails }) });
    if (res.status !== 200) throw new Error(`batch refused: ${res.status} ${await res.text()}`);
  }
}));

const start = Date.now();
for (let i = 0; i < workers; i++) await cluster.addProcess('worker');
const accepted = () => PROVIDERS.reduce((s, p) => s + zoo.mx[p.name].accepted.length, 0);
const trace = process.env.BENCH_TRACE ? setInterval(() => process.stdout.write(`${((Date.now() - start) / 1000).toFixed(0)}s ${PROVIDERS.map((p) => zoo.mx[p.name].accepted.length).join(' ')} open ${PROVIDERS.map((p) => zoo.mx[p.name].open).join(' ')}\n`), 1000) : null;
for (;;) {
  if (accepted() >= total) break;
  if (Date.now() - start > 20 * 60_000) break;
  await new Promise((r) => setTimeout(r, 250));
}
const end = Date.now();
if (trace) clearInterval(trace);

const least = Math.max(...PROVIDERS.map((p, i) => (p.throttled ? 0 : counts[i] / (p.perMinute / 60))));
const lastUnsuspended = Math.max(...PROVIDERS.filter((p) => !p.throttled).flatMap((p) => zoo.mx[p.name].accepted.map((a) => a.at)));
const lines: string[] = [];
const took = (lastUnsuspended - start) / 1000;
lines.push(`time         ${took.toFixed(1)} s to the last delivery of the unsuspended providers; least the limits allow ${least.toFixed(1)} s → ${(least / took).toFixed(3)} of the best (goal ≥ 0.9); all ${accepted()}/${total} in ${((end - start) / 1000).toFixed(1)} s`);
let violations = 0;
for (const [i, p] of PROVIDERS.entries()) {
  const mx = zoo.mx[p.name];
  const times = mx.accepted.map((a) => a.at);
  const refused = mx.refusals.filter((r) => r.reply !== '421 TSS04').length;
  violations += refused;
  const peakMinute = peakInWindow(times, 60_000);
  if (peakMinute > p.perMinute) violations += peakMinute - p.perMinute;
  const span = (Math.max(...times) - Math.min(...times)) / 1000;
  lines.push(`  ${p.name.padEnd(8)} ${String(mx.accepted.length).padStart(6)}/${counts[i]}  ${(mx.accepted.length / span).toFixed(1).padStart(6)}/s (limit ${(p.perMinute / 60).toFixed(0)}/s)  peak ${peakMinute} in any minute (limit ${p.perMinute}), max ${mx.maxOpen} connections open (limit ${p.connections}), ${refused} refused${p.throttled ? `, ${mx.refusals.length - refused} throttle replies` : ''}`);
}
lines.push(`violations   ${violations} (goal 0)`);
const bad = await pool.query(`SELECT (SELECT count(*) FROM events WHERE type IN ('hard_bounce', 'soft_bounce'))::int AS bounces, (SELECT count(*) FROM suppressions)::int AS suppressed, (SELECT count(*) FROM messages WHERE status IN ('bounced', 'failed'))::int AS failed`);
lines.push(`bounced      ${bad.rows[0].bounces} bounce events, ${bad.rows[0].failed} messages bounced/failed, ${bad.rows[0].suppressed} suppressed (goal 0)`);

// The others' throughput while the throttled provider is suspended, against their rate the rest of their run.
const throttled = PROVIDERS.find((p) => p.throttled)!;
const tmx = zoo.mx[throttled.name];
const tss = tmx.refusals.filter((r) => r.reply === '421 TSS04');
if (tss.length > 0) {
  const s0 = tss[0].at;
  const resumed = Math.min(...tmx.accepted.map((a) => a.at).filter((t) => t > s0));
  const len = resumed - s0;
  const others = PROVIDERS.filter((p) => !p.throttled).flatMap((p) => zoo.mx[p.name].accepted.map((a) => a.at));
  const during = others.filter((t) => t >= s0 && t < resumed).length / (len / 1000);
  // Their rate without the suspension: the rest of their run, from 5 s after the workers started (start-up) to their last delivery.
  const from = start + 5_000;
  const to = Math.max(...others);
  const outside = others.filter((t) => t >= from && (t < s0 || t >= resumed)).length / ((to - from - len) / 1000);
  lines.push(`isolation    ${throttled.name} suspended ${(len / 1000).toFixed(1)} s (${tss.length} throttle replies); the others ${during.toFixed(1)}/s meanwhile against ${outside.toFixed(1)}/s the rest of their run → ${(during / outside).toFixed(3)} (goal within 10 %)`);
} else {
  lines.push(`isolation    ${throttled.name} was never throttled (the run ended before its receiver began to)`);
}
const cpu = cluster.cpuSeconds();
lines.push(`cpu s        ${cpu.map((c, i) => `${i === 0 ? 'api' : 'worker'} ${c.toFixed(1)}`).join(', ')}`);
process.stdout.write(lines.join('\n') + '\n');
await cluster.stop();
await dns.close();
await zoo.close();
