/**
 * bench/webhooks: how fast recorded events reach a webhook receiver, on a scratch embedded
 * PostgreSQL (or DATABASE_URL) with the real dispatcher loop (LISTEN/NOTIFY + 1 s poll) and a
 * real HTTP receiver on loopback that parses every batch.
 *
 *   1. backlog: N events recorded while the dispatcher is stopped, then drained → events/s
 *   2. live: N events recorded via recordEvents in 500-event statements while the dispatcher
 *      runs → events/s from the first insert to the last event received
 *   3. latency on an idle system: single events at a slow rate, occurredAt → received, p50/p99
 *
 *   npm run bench:webhooks -- [--events 50000] [--latency-events 200] [--rate 20]
 */
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { notifySoon } from '../src/db/notify.js';
import { openDatabase } from '../src/db/open.js';
import { createAccount } from '../src/domain/accounts.js';
import { recordEvents, type NewEvent } from '../src/domain/events.js';
import { createHook } from '../src/domain/webhooks/hooks.js';
import { startWebhookDispatcher } from '../src/workers/webhooks.js';

const { values } = parseArgs({ options: { events: { type: 'string', default: '50000' }, 'latency-events': { type: 'string', default: '200' }, rate: { type: 'string', default: '20' } } });
const N = Number(values.events);
const LATENCY_EVENTS = Number(values['latency-events']);
const RATE = Number(values.rate);

const dataDir = mkdtempSync(join(tmpdir(), 'postline-bench-webhooks-'));
const config = loadConfig({ ...process.env, POSTLINE_DATA_DIR: dataDir, POSTLINE_WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'warn' });
const db = await openDatabase(config, { owner: true, poolSize: 10 });

// The receiver: parse each batch, note when each event arrived.
let received = 0;
let batches = 0;
let maxBatch = 0;
let onEvent: (occurredAt: string, at: number) => void = () => {};
let waiter: { count: number; resolve: () => void } | null = null;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const { events } = JSON.parse(Buffer.concat(chunks).toString()) as { events: { occurredAt: string }[] };
    batches++;
    maxBatch = Math.max(maxBatch, events.length);
    for (const e of events) onEvent(e.occurredAt, at);
    received += events.length;
    res.end();
    if (waiter && received >= waiter.count) waiter.resolve();
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
const until = (count: number) => new Promise<void>((resolve) => {
  if (received >= count) resolve();
  else waiter = { count, resolve };
});

const account = await createAccount(db.pool, { name: 'bench' });
await createHook(db.pool, config, account.id, { url, events: ['sent', 'delivered', 'open', 'click'] }, new Date());
const event = (i: number): NewEvent => ({
  accountId: account.id, messageId: `msg_${String(i).padStart(32, '0')}`, type: i % 4 === 0 ? 'click' : 'delivered', email: `user${i}@example.com`,
  url: 'https://example.com/landing?utm_source=postline', data: { mx: 'mx1.example.com', response: '250 2.0.0 OK queued as 4Xk3' }, occurredAt: new Date(),
});
async function recordMany(n: number, offset: number): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    await recordEvents(db.pool, Array.from({ length: Math.min(500, n - i) }, (_, j) => event(offset + i + j)));
    notifySoon(db.pool, 'postline_events'); // as every event writer does after its commit
  }
}
const deps = { config, pool: db.pool, clock: systemClock };
const onError = (name: string, err: unknown) => process.stderr.write(`${name}: ${(err as Error).message}\n`);
const line = (s: string) => process.stdout.write(s + '\n');
line(`webhooks bench: ${N} events, 500-event batches, loopback receiver, node ${process.version}`);

// 1. Backlog drain.
let t0 = performance.now();
await recordMany(N, 0);
const insertMs = performance.now() - t0;
line(`record      ${N} events in 500-event statements: ${(N / (insertMs / 1000)).toFixed(0)} events/s (fan-out trigger included)`);
const dispatcher = startWebhookDispatcher(deps, onError);
t0 = performance.now();
await until(N);
let ms = performance.now() - t0;
line(`backlog     ${N} events delivered in ${batches} requests (max ${maxBatch}/request): ${(N / (ms / 1000)).toFixed(0)} events/s`);

// 2. Live: recording and delivering at once.
const before = received;
t0 = performance.now();
await recordMany(N, N);
await until(before + N);
ms = performance.now() - t0;
line(`live        ${N} events, first insert → last received: ${(N / (ms / 1000)).toFixed(0)} events/s`);

// 3. Latency, idle system: one event at a time at a slow rate.
await new Promise((r) => setTimeout(r, 500));
const latencies: number[] = [];
onEvent = (occurredAt, at) => latencies.push(at - Date.parse(occurredAt));
for (let i = 0; i < LATENCY_EVENTS; i++) {
  await recordEvents(db.pool, [{ ...event(i), occurredAt: new Date() }]);
  notifySoon(db.pool, 'postline_events');
  await new Promise((r) => setTimeout(r, 1000 / RATE));
}
await until(2 * N + LATENCY_EVENTS);
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
line(`latency     ${LATENCY_EVENTS} single events at ${RATE}/s, occurredAt → received: p50 ${pct(50)} ms  p99 ${pct(99)} ms  max ${latencies.at(-1)} ms`);

await dispatcher.stop();
server.close();
await db.close();
rmSync(dataDir, { recursive: true, force: true });
