/**
 * Benchmarks measure the production build (`dist/`) running as its own processes, so the
 * load generator never shares an event loop with the server. This starts them on a scratch
 * data dir with an embedded PostgreSQL and tears everything down afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.js';
import { freePort } from '../../src/db/embedded.js';
import { openDatabase, type Database } from '../../src/db/open.js';

export interface BenchCluster {
  port: number;
  env: Record<string, string>;
  config: Config;
  /** A pool on the cluster's database (for setup and for reading results). */
  db: Database;
  processes: ChildProcess[];
  /** Starts one more process (a worker started after messages were accepted, say). */
  addProcess(role: string): Promise<void>;
  /** Peak resident set size of each server process so far, in MB. */
  peakRssMb(): number[];
  /**
   * Peaks of each worker process's V8 heap so far, in MB (sampled inside it by
   * bench/lib/heap-peaks.mjs; written each second, so up to a second old); null for other roles.
   */
  peakHeapMb(): (HeapPeaks | null)[];
  /** CPU time (user + system) each server process has used so far, in seconds. */
  cpuSeconds(): number[];
  /**
   * CPU time each server process had used when it printed "postline ready", in seconds: its
   * start-up (loading modules, opening the database, migrating, starting its loops). A
   * benchmark's per-message figure with it included is what a short run costs; without it,
   * what each further message costs (docs/benchmarks.md).
   */
  startupCpuSeconds(): number[];
  /**
   * CPU time the embedded PostgreSQL has used so far, in seconds: the postmaster, its live
   * processes (backends, walwriter, checkpointer…) and the backends that have exited (which
   * the postmaster reaped into its children's times). It shares the cores with the workers,
   * so its CPU is throughput lost as much as theirs. NaN when the database is not embedded.
   */
  postgresCpuSeconds(): number;
  stop(): Promise<void>;
}

export interface HeapPeaks {
  /** The young generation (two semi-spaces) and the old generation, as V8 sized them. */
  newSpace: number;
  oldSpace: number;
  /** All of V8's heap spaces together. */
  heapTotal: number;
  /** Memory outside the heap that V8 knows of; of it, Buffers and other ArrayBuffers. */
  external: number;
  arrayBuffers: number;
  /** V8's limit: the old generation's plus three semi-spaces (it moves with --max-semi-space-size). */
  heapSizeLimit: number;
}

const HEAP_PEAKS = new URL('./heap-peaks.mjs', import.meta.url).pathname;

/** USER_HZ of /proc/PID/stat: 100 on Linux for x86 and arm. */
const CLOCK_TICKS_PER_SECOND = 100;

/** Fields of /proc/PID/stat after the parenthesised name (index 0 is field 3, the state). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
}

/** utime + stime (fields 14, 15), with the reaped children's cutime + cstime (16, 17) if asked, in seconds. */
function cpuOf(pid: number, withReaped = false): number {
  const f = statFields(pid);
  const ticks = Number(f[11]) + Number(f[12]) + (withReaped ? Number(f[13]) + Number(f[14]) : 0);
  return ticks / CLOCK_TICKS_PER_SECOND;
}

/** The postmaster's CPU with that of every process it started (field 4 of stat is the parent pid). */
function postgresCpu(dataDir: string): number {
  const m = /^(\d+)/.exec(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8'));
  if (!m) return NaN;
  const postmaster = Number(m[1]);
  let total = cpuOf(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = statFields(Number(entry));
      if (Number(f[1]) === postmaster) total += cpuOf(Number(entry));
    } catch {
      /* gone meanwhile: its time is in the postmaster's reaped children now */
    }
  }
  return total;
}

/** BENCH_PROFILE_ROLE=worker writes a V8 CPU profile of each such process to BENCH_PROFILE_DIR. */
function startProcess(role: string, env: Record<string, string>): Promise<{ child: ChildProcess; startupCpu: number }> {
  const profile = process.env.BENCH_PROFILE_ROLE === role ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR ?? 'bench-profiles'}`] : [];
  // BENCH_WORKER_NODE_FLAGS="--flag …" starts the worker processes with node/V8 flags: an A/B of
  // a runtime setting (decision 0051 measured the young generation's size this way).
  // Workers sample their own heap for peakHeapMb().
  // BENCH_API_NODE_FLAGS does the same for the api processes (decision 0059 measured the API's young generation so).
  const flags =
    role === 'worker' ? [...(process.env.BENCH_WORKER_NODE_FLAGS ?? '').split(' ').filter(Boolean), '--import', HEAP_PEAKS]
      : role === 'api' ? (process.env.BENCH_API_NODE_FLAGS ?? '').split(' ').filter(Boolean) : [];
  const child = spawn(process.execPath, [...profile, ...flags, 'dist/bin/postline.js', 'start', '--role', role], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      // Read at once: the process's CPU up to being ready is its start-up.
      if (out.includes('postline ready')) resolve({ child, startupCpu: cpuOf(child.pid!) });
    });
    child.on('exit', (code) => reject(new Error(`postline ${role} exited with ${code}`)));
  });
}

/** Starts `roles` in order (the first owns the embedded PostgreSQL). */
export async function startCluster(roles: string[], extraEnv: Record<string, string> = {}): Promise<BenchCluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'postline-bench-'));
  const port = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    POSTLINE_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    POSTLINE_RATE_LIMIT_LIVE: '100000000',
    // The inbound SMTP listener on a free port: benchmarks may run while a server holds 2525.
    POSTLINE_SMTP_PORT: '0',
    BENCH_HEAP_PEAKS_DIR: dataDir,
    ...extraEnv,
  };
  const processes: ChildProcess[] = [];
  const startupCpu: number[] = [];
  const add = (started: { child: ChildProcess; startupCpu: number }) => {
    processes.push(started.child);
    startupCpu.push(started.startupCpu);
  };
  for (const role of roles) {
    // Only one process can listen on the port; later api roles would clash, so they get none.
    add(await startProcess(role, processes.length === 0 ? env : { ...env, PORT: String(await freePort()) }));
  }
  const config = loadConfig(env);
  const db = await openDatabase(config, { owner: false, poolSize: 8, migrate: false });
  const peaks = processes.map(() => 0);
  const sample = () =>
    processes.forEach((p, i) => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.pid}/status`, 'utf8'));
        if (m) peaks[i] = Math.max(peaks[i], Number(m[1]) / 1024);
      } catch {
        /* process gone */
      }
    });
  const timer = setInterval(sample, 500);
  return {
    port,
    env,
    config,
    db,
    processes,
    async addProcess(role: string) {
      add(await startProcess(role, { ...env, PORT: String(await freePort()) }));
      peaks.push(0);
    },
    peakRssMb: () => {
      sample();
      return peaks.map((p) => Math.round(p));
    },
    peakHeapMb: () =>
      processes.map((p) => {
        try {
          const peaks = JSON.parse(readFileSync(join(dataDir, `${p.pid}.json`), 'utf8')) as HeapPeaks;
          return Object.fromEntries(Object.entries(peaks).map(([k, v]) => [k, Math.round(v / 1048576)])) as unknown as HeapPeaks;
        } catch {
          return null; // not a worker, or no sample written yet
        }
      }),
    cpuSeconds: () =>
      processes.map((p) => {
        try {
          return cpuOf(p.pid!);
        } catch {
          return NaN;
        }
      }),
    startupCpuSeconds: () => [...startupCpu],
    postgresCpuSeconds: () => {
      try {
        return postgresCpu(dataDir);
      } catch {
        return NaN;
      }
    },
    async stop() {
      clearInterval(timer);
      await db.close();
      for (const p of [...processes].reverse()) {
        p.kill('SIGINT');
        await new Promise((r) => p.once('exit', r));
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
