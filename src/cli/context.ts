import { loadConfig, ConfigError, type Config } from '../config.js';
import { openDatabase } from '../db/open.js';
import type { Pool } from '../db/pool.js';
import { AppError } from '../errors.js';

export interface CliContext {
  config: Config;
  pool: Pool;
}

/** Output helper: `--json` prints machine-readable JSON; otherwise the readable form. */
export function output(json: boolean | undefined, value: unknown, readable: () => string): void {
  process.stdout.write((json ? JSON.stringify(value, null, 2) : readable()) + '\n');
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

/**
 * Runs a CLI command against the database: the running embedded server of this data dir if
 * there is one (left running), else one started for the command and stopped after it.
 */
export async function withDatabase<T>(fn: (ctx: CliContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase(config, { owner: false, poolSize: 4 });
  try {
    return await fn({ config, pool: db.pool });
  } finally {
    await db.close();
  }
}

/** Turns known errors into a one-line message and exit code 1; unknown ones keep their stack. */
export function reportCliError(err: unknown): never {
  if (err instanceof AppError || err instanceof ConfigError) {
    process.stderr.write(`error: ${err.message}\n`);
  } else {
    process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  process.exit(1);
}
