/**
 * `npm test`: starts one embedded PostgreSQL for the whole run (unless TEST_DATABASE_URL
 * names a server), migrates a template database, then runs every test file with node's test
 * runner. Each file clones its own database from the template (test/helpers/db.ts).
 * Pass file paths or substrings to run a subset: `npm test -- suppression`. Browser tests
 * (test/e2e, headless Chromium) run last, one file at a time; POSTLINE_TEST_BROWSER=skip leaves
 * them out and says so (for a second run of the suite on another Node version). Scale-out
 * tests (test/scale) run before them, also one file at a time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { startEmbedded } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';

export const TEMPLATE_DB = 'postline_test_template';

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(relative(process.cwd(), p));
  }
  return out.sort();
}

async function prepareTemplate(adminUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const stale = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE 'postline_test_%'`);
  for (const r of stale.rows) await admin.query(`DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = '/' + TEMPLATE_DB;
  const pool = createPool(url.toString(), 2);
  await migrate(pool);
  await pool.end();
}

function runFiles(files: string[], flags: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', ...flags, ...files], { stdio: 'inherit', env });
  const forward = (sig: NodeJS.Signals) => child.kill(sig);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  return new Promise<number>((resolve) => child.on('exit', (code) => {
    process.off('SIGINT', forward).off('SIGTERM', forward);
    resolve(code ?? 1);
  }));
}

async function main(): Promise<number> {
  const filters = process.argv.slice(2);
  const files = findTests('test').filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
  let adminUrl = process.env.TEST_DATABASE_URL;
  let stop = async () => {};
  let scratch: string | undefined;
  if (!adminUrl) {
    scratch = mkdtempSync(join(tmpdir(), 'postline-test-'));
    const server = await startEmbedded(scratch);
    adminUrl = server.url;
    stop = server.stop;
  }
  try {
    await prepareTemplate(adminUrl);
    const concurrency = process.env.TEST_CONCURRENCY ?? '4';
    const env = { ...process.env, POSTLINE_TEST_ADMIN_URL: adminUrl, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' };
    // Browser tests (test/e2e) run after the rest, one file at a time, with a longer limit:
    // each drives a real server and Chromium through many pages.
    const browser = files.filter((f) => f.startsWith(join('test', 'e2e')));
    // Scale-out tests (test/scale) start several server processes each: they run after the
    // rest, one file at a time, with a longer limit, so their processes start on a machine not
    // also running four other files.
    const scale = files.filter((f) => f.startsWith(join('test', 'scale')));
    const rest = files.filter((f) => !browser.includes(f) && !scale.includes(f));
    let code = rest.length > 0 ? await runFiles(rest, [`--test-concurrency=${concurrency}`, '--test-timeout=240000'], env) : 0;
    if (scale.length > 0) code = (await runFiles(scale, ['--test-concurrency=1', '--test-timeout=300000'], env)) || code;
    if (browser.length > 0) {
      if (process.env.POSTLINE_TEST_BROWSER === 'skip') {
        process.stdout.write(`# browser tests NOT run (POSTLINE_TEST_BROWSER=skip): ${browser.join(', ')}\n`);
      } else {
        const e2e = await runFiles(browser, ['--test-concurrency=1', '--test-timeout=900000'], env);
        code = code || e2e;
      }
    }
    return code;
  } finally {
    await stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

process.exit(await main());
