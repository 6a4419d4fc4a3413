import type { Queryable } from '../../pool.js';
import type { AudienceFilter } from './fanout.js';

// Of the attribute keys a campaign's content names, those that no subscriber of the audience
// has (save-time merge check). One anti-join per key; each stops at the first subscriber found,
// so a common key costs one index step and only a truly absent key reads the audience.
export async function selectAbsentAttributeKeys(db: Queryable, f: AudienceFilter, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await db.query<{ k: string }>(
    `SELECT k FROM unnest($${f.params.length + 1}::text[]) AS k
      WHERE NOT EXISTS (SELECT 1 FROM subscribers s WHERE s.account_id = $1 AND s.status <> 'unconfirmed' AND ${f.where} AND s.attributes ? k)`,
    [...f.params, keys],
  );
  return new Set(rows.map((r) => r.k));
}
