import type { Queryable } from './pool.js';

/**
 * The oldest PostgreSQL Postline runs on: 15 (docs/decisions/0028-postgresql-versions.md).
 * Newer servers get faster paths where one exists (chosen in SQL by server_version_num,
 * migration 003); nothing requires more than 15.
 */
export const MIN_SERVER_VERSION_NUM = 150000;
export const SUPPORTED_VERSIONS = 'PostgreSQL 15 or later';

/** Why a server of this version cannot be used, or undefined when it can. */
export function unsupportedServerReason(versionNum: number, version: string): string | undefined {
  if (versionNum >= MIN_SERVER_VERSION_NUM) return undefined;
  return `the database server is PostgreSQL ${version}; Postline needs ${SUPPORTED_VERSIONS} ` +
    `(server_version_num ${versionNum} < ${MIN_SERVER_VERSION_NUM})`;
}

/** Refuses, before any migration runs, a server older than the supported range. */
export async function assertSupportedServer(db: Queryable): Promise<void> {
  const { rows } = await db.query(
    `SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version`,
  );
  const reason = unsupportedServerReason(rows[0].num as number, rows[0].version as string);
  if (reason) throw new Error(reason);
}
