/**
 * `npm test`: starts one embedded PostgreSQL for the whole run (unless TEST_DATABASE_URL
 * names a server), migrates a template database, then runs every test file with node's test
 * runner. Each file clones its own database from the template (test/helpers/db.ts).
 * Pass file paths or substrings to run a subset: `npm test -- suppression`.
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
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=120000', ...files],
      { stdio: 'inherit', env: { ...process.env, POSTLINE_TEST_ADMIN_URL: adminUrl, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' } },
    );
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on('SIGINT', forward).on('SIGTERM', forward);
    return await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  } finally {
    await stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

process.exit(await main());
