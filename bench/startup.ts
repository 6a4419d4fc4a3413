/**
 * bench/startup: each role's CPU from spawn to "postline ready" (loading its modules, opening
 * the database, checking migrations, starting its loops or listeners), the part of a short
 * benchmark run that is not per message. The production build (`dist/`) is started as its own
 * processes on a scratch embedded PostgreSQL: one API process (which owns the database), then
 * `--runs` more API processes and `--runs` workers one after another, each left running until
 * the end so none starts on a quieter machine than the others.
 *
 * CPU is read from /proc (user + system, 10 ms ticks), so figures are less sensitive to other
 * load than wall time; the median of the runs is printed with all of them.
 *
 *   npm run bench:startup -- [--runs 5]
 */
import { parseArgs } from 'node:util';
import { startCluster } from './lib/server.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);

const cluster = await startCluster(['api']);
for (let i = 0; i < runs; i++) await cluster.addProcess('api');
for (let i = 0; i < runs; i++) await cluster.addProcess('worker');
const cpu = cluster.startupCpuSeconds();
await cluster.stop();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (role: string, xs: number[]) => `${role.padEnd(7)} median ${median(xs).toFixed(2)} s  (${xs.map((x) => x.toFixed(2)).join(', ')})`;
process.stdout.write(
  [
    `start-up cpu, spawn to ready, node ${process.version}, ${runs} runs per role (the first API process, which starts PostgreSQL, not counted)`,
    line('api', cpu.slice(1, 1 + runs)),
    line('worker', cpu.slice(1 + runs)),
  ].join('\n') + '\n',
);
