/**
 * bench/submission: SMTP submission throughput and accept latency. `postline start --role api`
 * (production build, its own process) listens for submission with STARTTLS; nodemailer
 * submits `--messages` messages over `--connections` pooled connections (each: EHLO,
 * STARTTLS, AUTH PLAIN once, then MAIL/RCPT/DATA per message). Accept latency is from
 * sendMail to the 250 that says the message is stored. Every message has its own recipient
 * and Message-ID; the run checks that exactly that many were stored.
 *
 *   npm run bench:submission -- [--messages 1000] [--connections 8]
 */
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { createAccount } from '../src/domain/accounts.js';
import { createApiKey } from '../src/domain/keys/api-keys.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../src/domain/domains/domains.js';
import { freePort } from '../src/db/embedded.js';
import { makeTestCertificate } from '../test/helpers/tls-cert.js';
import { startCluster } from './lib/server.js';

const { values } = parseArgs({ options: { messages: { type: 'string', default: '1000' }, connections: { type: 'string', default: '8' } } });
const messages = Number(values.messages);
const connections = Number(values.connections);

const cert = makeTestCertificate();
const submissionPort = await freePort();
const cluster = await startCluster(['api'], {
  POSTLINE_SUBMISSION_PORT: String(submissionPort), POSTLINE_TLS_CERT: cert.certPath, POSTLINE_TLS_KEY: cert.keyPath,
});
const pool = cluster.db.pool;
const account = await createAccount(pool, { name: 'bench' });
const key = (await createApiKey(pool, { accountId: account.id, mode: 'live' })).key;
const domain = await createDomain(pool, { accountId: account.id, name: 'bench.test', now: new Date() }, { secret: cluster.config.secret, targets: dnsTargetsOf(cluster.config) });
await forceVerifyDomain(pool, domain.id, new Date());

const transport = nodemailer.createTransport({
  host: '127.0.0.1', port: submissionPort, secure: false, requireTLS: true, tls: { ca: cert.cert },
  auth: { user: 'api', pass: key }, pool: true, maxConnections: connections, maxMessages: Infinity,
} as SMTPTransport.Options);
const html = '<p>Hello Ada,</p><p>Order A-1001 is on its way. <a href="https://bench.test/track?o=A-1001">Track it</a>.</p>' + '<p>Lorem ipsum dolor sit amet.</p>'.repeat(40);
const runId = Date.now();

process.stdout.write(`SMTP submission (STARTTLS, AUTH PLAIN) against 'postline start --role api', ${messages} messages over ${connections} connections, ~${Math.round(html.length / 1024)} KB html, node ${process.version}\n`);
const latencies: number[] = [];
const refused: string[] = [];
let next = 0;
const started = performance.now();
// `connections` clients, each submitting its next message once the previous one is answered,
// as an application's mail queue does; the pool gives each its own connection.
await Promise.all(
  Array.from({ length: connections }, async () => {
    for (let i = next++; i < messages; i = next++) {
      const t0 = performance.now();
      try {
        await transport.sendMail({
          from: 'Bench <hello@bench.test>', to: `reader${i}@example.net`, subject: `Your order A-${i} has shipped`,
          html, text: 'Order on its way', messageId: `<bench-${runId}-${i}@app.bench.test>`,
        });
        latencies.push(performance.now() - t0);
      } catch (err) {
        refused.push((err as { response?: string }).response ?? String(err));
      }
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
transport.close();
const stored = (await pool.query('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [account.id])).rows[0].n as number;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]?.toFixed(1) ?? '-';
process.stdout.write(
  [
    `submission  ${(latencies.length / seconds).toFixed(0)} messages/s  (${latencies.length} accepted in ${seconds.toFixed(2)} s, stored ${stored}, refused ${refused.length}${refused.length ? `: ${refused[0]}` : ''})`,
    `accept ms   p50 ${pct(50)}  p90 ${pct(90)}  p99 ${pct(99)}  max ${latencies.at(-1)?.toFixed(1) ?? '-'}  (sendMail to 250; the first message of each connection includes EHLO, STARTTLS and AUTH)`,
  ].join('\n') + '\n',
);
await cluster.stop();
if (stored !== messages || refused.length > 0) process.exitCode = 1;
