import { after } from 'node:test';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool, type Pool } from '../../src/db/pool.js';

const TEMPLATE_DB = 'postline_test_template';

function adminUrl(): string {
  const url = process.env.POSTLINE_TEST_ADMIN_URL;
  if (!url) throw new Error('run tests with `npm test` (it starts PostgreSQL and sets POSTLINE_TEST_ADMIN_URL)');
  return url;
}

export function urlFor(database: string): string {
  const url = new URL(adminUrl());
  url.pathname = '/' + database;
  return url.toString();
}

/**
 * A fresh, migrated database for one test file, cloned from the template the runner
 * prepared, and dropped when the file ends.
 */
export async function testDatabase(): Promise<{ url: string; pool: Pool; name: string }> {
  const name = `postline_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DB}`);
  await admin.end();
  const url = urlFor(name);
  const pool = createPool(url, 10);
  after(async () => {
    await pool.end();
    const a = new pg.Client({ connectionString: adminUrl() });
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await a.end();
  });
  return { url, pool, name };
}
