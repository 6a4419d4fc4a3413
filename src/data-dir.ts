import { resolve } from 'node:path';

/** Where Postline keeps its state: the embedded PostgreSQL, generated secrets, the compile cache. */
export function dataDirOf(env: Record<string, string | undefined>): string {
  return resolve(env.POSTLINE_DATA_DIR || './data');
}
