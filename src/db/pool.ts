import pg from 'pg';
import { inSandbox } from './sandbox.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that can run a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

// Return BIGINT (count(*), sums) as JS numbers: our counts stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

/**
 * `relaxed`: commits don't wait for the WAL flush (synchronous_commit=off). Only for writes
 * whose loss in a crash is harmless — the rate-limit counters — never for mail or events.
 */
export function createPool(url: string, max = 20, opts: { relaxed?: boolean } = {}): Pool {
  const pool = new pg.Pool({ connectionString: url, max, ...(opts.relaxed ? { options: '-c synchronous_commit=off' } : {}) });
  pool.on('error', () => {}); // idle-client errors surface on the next query instead
  return pool;
}

const afterCommitHooks = new WeakMap<PoolClient, ((pool: Pool) => void)[]>();

/**
 * Runs `fn` once what `db` wrote is committed: at once on a pool (autocommit), after COMMIT
 * inside withTransaction, never if the transaction rolls back (nor in a test-key sandbox,
 * db/sandbox.ts, which always does). For wake-ups that must not
 * happen before the data is visible (and must not be inside the transaction: db/notify.ts).
 */
export function afterCommit(db: Queryable, fn: (pool: Pool) => void): void {
  if (inSandbox()) return; // a test-key request: nothing is ever committed
  if (db instanceof pg.Pool) {
    fn(db);
    return;
  }
  const hooks = afterCommitHooks.get(db as PoolClient);
  if (hooks) hooks.push(fn);
}

/** Runs `fn` in a transaction; commits on success, rolls back on any error. */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const hooks: ((pool: Pool) => void)[] = [];
  afterCommitHooks.set(client, hooks);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    afterCommitHooks.delete(client);
    for (const hook of hooks) hook(pool);
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    afterCommitHooks.delete(client);
    client.release();
  }
}
