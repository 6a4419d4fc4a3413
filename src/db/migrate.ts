import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.js';
import type { Pool } from './pool.js';

export const MIGRATIONS_DIR = join(PACKAGE_ROOT, 'migrations');

// Any constant works; it only has to be the same for every Postline process.
const MIGRATION_LOCK = 7_310_004_221;

export function listMigrations(dir = MIGRATIONS_DIR): { version: number; name: string; sql: string }[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.split('_')[0]), name: f, sql: readFileSync(join(dir, f), 'utf8') }));
}

/**
 * Applies pending migrations, each in its own transaction that records itself. A session
 * advisory lock serialises processes that start at once: the second waits, then finds
 * nothing left to do.
 */
export async function migrate(pool: Pool, log: (m: string) => void = () => {}): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query('SELECT version FROM schema_migrations')).rows.map((r) => r.version as number));
    let applied = 0;
    for (const m of listMigrations()) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      log(`applied migration ${m.name}`);
      applied++;
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
}

/** True when every migration on disk is recorded as applied (used by /readyz). */
export async function migrationsCurrent(pool: Pool): Promise<boolean> {
  const latest = Math.max(0, ...listMigrations().map((m) => m.version));
  const { rows } = await pool.query('SELECT coalesce(max(version), 0) AS v FROM schema_migrations');
  return Number(rows[0].v) >= latest;
}
