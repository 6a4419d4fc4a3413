/**
 * bench/smtp: the CPU the outbound SMTP layer alone spends per message (src/mail/smtp.ts), in
 * this process: N already built ~6 KB messages handed to SmtpSender over C connection slots
 * (as the delivery engine does), to Postfix's C `smtp-sink` on loopback, so the receiving
 * side's CPU is not in this process. Prints process CPU per message (user + system; a busy
 * shared machine inflates it far less than wall-clock rates) and messages per second.
 *
 *   npx tsx bench/smtp.ts [--messages 6000] [--connections 8] [--sink PORT]
 *
 * Without --sink it starts `smtp-sink` itself (Debian: postfix) on a free port.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { SmtpSender } from '../src/mail/smtp.js';
import { freePort } from '../src/db/embedded.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '6000' },
    connections: { type: 'string', default: '8' },
    sink: { type: 'string' },
  },
});
const total = Number(values.messages);
const connections = Number(values.connections);
let port = values.sink !== undefined ? Number(values.sink) : 0;
let sink: ReturnType<typeof spawn> | null = null;
if (!port) {
  port = await freePort();
  sink = spawn('smtp-sink', ['-4', '-u', 'nobody', '127.0.0.1:' + port, '1000'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
}

const body = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.\r\n'.repeat(64);
const raw = (i: number) => Buffer.from(`From: shop@bench.test\r\nTo: user${i}@example.net\r\nSubject: Order ${i}\r\nMessage-ID: <msg_${i}@bench.test>\r\n\r\n${body}`);
const messages = Array.from({ length: total }, (_, i) => raw(i));
const sender = new SmtpSender({ heloName: 'bench.test', maxConnectionsPerHost: connections });
const target = { kind: 'mx' as const, host: 'mx.example.net', address: '127.0.0.1', port };

// One warm-up message per slot opens the connections, as a running engine has them open.
await Promise.all(Array.from({ length: connections }, (_, c) => sender.send(target, { from: 'b@bench.test', to: 'w@example.net' }, messages[0], { slot: `bench:${c}` })));
const cpu0 = process.cpuUsage();
const t0 = Date.now();
let next = 0;
let delivered = 0;
await Promise.all(
  Array.from({ length: connections }, async (_, c) => {
    while (next < total) {
      const i = next++;
      const r = await sender.send(target, { from: `bounces+${i}@bench.test`, to: `user${i}@example.net` }, messages[i], { slot: `bench:${c}` });
      if (r.kind === 'delivered') delivered++;
    }
  }),
);
const seconds = (Date.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${total} messages of ${messages[0].length} bytes over ${connections} connections, node ${process.version}\n` +
    `delivered    ${delivered} (${(delivered / seconds).toFixed(0)}/s)\n` +
    `cpu          ${((cpu.user + cpu.system) / 1000 / total).toFixed(3)} ms per message (user ${(cpu.user / 1000 / total).toFixed(3)}, system ${(cpu.system / 1000 / total).toFixed(3)})\n`,
);
await sender.close();
sink?.kill();
