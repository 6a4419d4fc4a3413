import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';

/**
 * The sandbox: everything a test-key request writes happens inside one transaction that is
 * rolled back (docs/decisions/0011-test-key-sandbox.md). Route handlers keep using the one pool
 * they know; the pool the app hands them (`sandboxAware`) looks up the request's sandbox in an
 * AsyncLocalStorage and, inside one, sends every statement to the sandbox's connection:
 * - `pool.query` runs as one savepoint, so a failing statement fails alone, exactly as an
 *   autocommitted statement would, and the code after it sees what a live request would see;
 * - `pool.connect()` hands out a stand-in client on the same connection whose BEGIN / COMMIT /
 *   ROLLBACK become SAVEPOINT / RELEASE / ROLLBACK TO, so withTransaction nests.
 * So a test key gets the same validation, the same errors and the same answers as a live key,
 * through the same code, and nothing stays. What is not in the database (an HTTP request to a
 * webhook, a wake-up NOTIFY after commit) asks `inSandbox()` and does not happen.
 */
interface Sandbox {
  client: pg.PoolClient;
  closed: boolean;
  /** Statements of one sandbox run one unit at a time (a savepoint is per connection). */
  tail: Promise<unknown>;
  savepoints: number;
}

const current = new AsyncLocalStorage<Sandbox>();

/** Whether the code calling it runs for a test-key request: nothing real may happen. */
export function inSandbox(): boolean {
  return current.getStore() !== undefined;
}

/** Runs `fn` outside any sandbox: for bookkeeping that must persist (idempotency records). */
export function outsideSandbox<T>(fn: () => T): T {
  return current.exit(fn);
}

/** Runs `fn` with every statement through a `sandboxAware` pool inside one transaction, then rolls it back. */
export async function runInSandbox<T>(pool: pg.Pool, fn: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const sandbox: Sandbox = { client, closed: false, tail: Promise.resolve(), savepoints: 0 };
  try {
    await client.query('BEGIN');
    return await current.run(sandbox, fn);
  } finally {
    sandbox.closed = true;
    await sandbox.tail.catch(() => {});
    await client.query('ROLLBACK').catch(() => {});
    client.release();
  }
}

type QueryArgs = [config: string | pg.QueryConfig, values?: unknown[]];

function exclusive<T>(sandbox: Sandbox, unit: () => Promise<T>): Promise<T> {
  if (sandbox.closed) return Promise.reject(new Error('sandbox closed: a statement ran after its test-key request ended'));
  const run = sandbox.tail.then(unit);
  sandbox.tail = run.catch(() => {});
  return run;
}

/** A statement run as if autocommitted: in its own savepoint, undone alone when it fails. */
function autocommitted(sandbox: Sandbox, args: QueryArgs): Promise<pg.QueryResult> {
  return exclusive(sandbox, async () => {
    const name = `sbx_q${++sandbox.savepoints}`;
    await sandbox.client.query(`SAVEPOINT ${name}`);
    try {
      const result = await sandbox.client.query(...(args as [string, unknown[]]));
      await sandbox.client.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await sandbox.client.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {});
      throw err;
    }
  });
}

const BEGIN = /^\s*(BEGIN|START\s+TRANSACTION)\b/i;
const COMMIT = /^\s*(COMMIT|END)\s*;?\s*$/i;
const ROLLBACK = /^\s*(ROLLBACK|ABORT)\s*;?\s*$/i;

/** A client for `pool.connect()` inside a sandbox: its transactions are savepoints of the sandbox's. */
function standInClient(sandbox: Sandbox): pg.PoolClient {
  const open: string[] = [];
  const query = (...args: QueryArgs): Promise<pg.QueryResult> => {
    const text = typeof args[0] === 'string' ? args[0] : args[0].text;
    if (BEGIN.test(text)) {
      const name = `sbx_t${++sandbox.savepoints}`;
      open.push(name);
      return exclusive(sandbox, () => sandbox.client.query(`SAVEPOINT ${name}`));
    }
    if (COMMIT.test(text) && open.length > 0) {
      const name = open.pop()!;
      return exclusive(sandbox, () => sandbox.client.query(`RELEASE SAVEPOINT ${name}`));
    }
    if (ROLLBACK.test(text) && open.length > 0) {
      const name = open.pop()!;
      return exclusive(sandbox, async () => {
        await sandbox.client.query(`ROLLBACK TO SAVEPOINT ${name}`);
        return sandbox.client.query(`RELEASE SAVEPOINT ${name}`);
      });
    }
    return open.length > 0 ? exclusive(sandbox, () => sandbox.client.query(...(args as [string, unknown[]]))) : autocommitted(sandbox, args);
  };
  const stand = {
    query,
    release: () => {},
    on: () => stand,
    once: () => stand,
    off: () => stand,
    removeListener: () => stand,
    escapeIdentifier: (s: string) => sandbox.client.escapeIdentifier(s),
    escapeLiteral: (s: string) => sandbox.client.escapeLiteral(s),
  };
  return stand as unknown as pg.PoolClient;
}

/**
 * The pool as route handlers get it: itself outside a sandbox (one AsyncLocalStorage lookup
 * per call), the request's sandbox inside one.
 */
export function sandboxAware(pool: pg.Pool): pg.Pool {
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query') {
        return (...args: QueryArgs) => {
          const sandbox = current.getStore();
          return sandbox ? autocommitted(sandbox, args) : target.query(...(args as [string, unknown[]]));
        };
      }
      if (prop === 'connect') {
        return () => {
          const sandbox = current.getStore();
          return sandbox ? Promise.resolve(standInClient(sandbox)) : target.connect();
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
