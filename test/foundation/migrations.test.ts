import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { listMigrations, migrate, migrationsCurrent } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { urlFor } from '../helpers/db.js';
import { after } from 'node:test';

test('migrations: two processes migrating an empty database at once apply each migration once', async () => {
  const name = `postline_test_mig_${process.pid}`;
  const admin = new pg.Client({ connectionString: urlFor('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const a = createPool(urlFor(name), 2);
  const b = createPool(urlFor(name), 2);
  after(async () => {
    await a.end();
    await b.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  const [na, nb] = await Promise.all([migrate(a), migrate(b)]);
  assert.equal(na + nb, listMigrations().length);
  const { rows } = await a.query('SELECT version FROM schema_migrations ORDER BY version');
  assert.deepEqual(rows.map((r) => r.version), listMigrations().map((m) => m.version));
  assert.equal(await migrationsCurrent(a), true);
  assert.equal(await migrate(a), 0, 'a second run has nothing to do');
});
