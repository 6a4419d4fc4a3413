/**
 * bench/peer: Postline against Postfix + OpenDKIM on the same machine, back to back, both
 * delivering N messages of ~4 KB to Postfix's C `smtp-sink` on loopback (so the sink costs
 * neither side much CPU). Runs a peer script, named by `--peer PATH` or POSTLINE_PEER_SCRIPT (MODES=dkim:
 * it installs Postfix and OpenDKIM from Debian once and prints msgs_per_s), then
 * `bench/delivery.ts --sink PORT` against a fresh `smtp-sink -M N+1`, and prints both figures and
 * the ratio. `--runs R` alternates them R times; `--record` appends a line per run to
 * docs/benchmarks.md (date, commit, both figures, ratio).
 *
 *   npm run bench:peer -- [--messages 20000] [--runs 1] [--split] [--record]
 *
 * Needs root (the peer script installs packages and starts a private Postfix on 127.0.0.1).
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../src/db/embedded.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '1' },
    split: { type: 'boolean', default: false },
    record: { type: 'boolean', default: false },
    peer: { type: 'string' },
  },
});
const N = Number(values.messages);

function peerScript(): string {
  const candidates = [values.peer, process.env.POSTLINE_PEER_SCRIPT]
    .filter((p): p is string => Boolean(p))
    .map((p) => resolve(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`peer script not found (tried ${candidates.join(', ') || 'nothing'}); pass --peer PATH or set POSTLINE_PEER_SCRIPT`);
  return found;
}

/** Runs a command, echoing its output, and returns stdout. */
function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      process.stdout.write(d);
    });
    child.on('exit', (code) => (code === 0 ? resolvePromise(out) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`))));
  });
}

async function peer(): Promise<number> {
  const out = await run('bash', [peerScript()], { N: String(N), MODES: 'dkim' });
  const m = /postfix\+opendkim: .*msgs_per_s=(\d+)/.exec(out);
  if (!m) throw new Error('the peer printed no msgs_per_s');
  return Number(m[1]);
}

async function ours(): Promise<{ endToEnd: number; engine: number | null }> {
  const port = await freePort();
  // N + 1: with -M N the sink exits on the N-th message's final dot before replying to it, and
  // that message would be deferred here (bench/delivery.ts); this sink is stopped below instead.
  const sink = spawn('smtp-sink', ['-4', '-u', 'nobody', '-M', String(N + 1), `127.0.0.1:${port}`, '1000'], { stdio: 'ignore' });
  const sinkExited = new Promise<void>((r) => sink.once('exit', () => r()));
  try {
    await new Promise((r) => setTimeout(r, 300));
    const args = ['tsx', 'bench/delivery.ts', '--messages', String(N), '--sink', String(port), ...(values.split ? ['--split'] : [])];
    const out = await run('npx', args);
    const endToEnd = Number(/end to end\s+(\d+) msg\/s/.exec(out)?.[1]);
    const engine = values.split ? Number(/delivered\s+\d+\/s between first and last arrival; (\d+)\/s from worker start/.exec(out)?.[1]) : null;
    return { endToEnd, engine };
  } finally {
    if (sink.exitCode === null) sink.kill('SIGTERM');
    await sinkExited;
  }
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim();
execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
const lines: string[] = [];
for (let i = 0; i < Number(values.runs); i++) {
  const p = await peer();
  const o = await ours();
  const figure = values.split ? o.engine! : o.endToEnd;
  const line = `| ${new Date().toISOString().slice(0, 16).replace('T', ' ')} | ${commit} | ${N} | ${values.split ? 'engine alone (--split)' : 'end to end'} | ${p} | ${figure} | ${(figure / p).toFixed(2)}× |`;
  lines.push(line);
  process.stdout.write(`\npeer postfix+opendkim ${p} msg/s; postline ${values.split ? 'engine alone' : 'end to end'} ${figure} msg/s; ratio ${(figure / p).toFixed(2)}×\n`);
}
process.stdout.write(['', '| date (UTC) | commit | messages | postline figure | postfix+opendkim msg/s | postline msg/s | ratio |', ...lines].join('\n') + '\n');
if (values.record) {
  const doc = 'docs/benchmarks.md';
  if (!readFileSync(doc, 'utf8').includes('| date (UTC) | commit | messages | postline figure |')) {
    appendFileSync(doc, '\n## Postline vs Postfix + OpenDKIM (`npm run bench:peer`)\n\nOne line per run, machine shared with other work unless noted.\n\n| date (UTC) | commit | messages | postline figure | postfix+opendkim msg/s | postline msg/s | ratio |\n|---|---|---|---|---|---|---|\n');
  }
  appendFileSync(doc, lines.join('\n') + '\n');
}
