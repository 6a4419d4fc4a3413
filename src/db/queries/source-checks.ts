import type { Queryable } from '../pool.js';
import type { SourceCheck } from '../../mail/fcrdns.js';

// The start-up check replaces what the previous start found: sources no longer in the policy
// go, the others are overwritten.
export async function replaceSourceChecks(db: Queryable, checks: SourceCheck[]): Promise<void> {
  await db.query('DELETE FROM source_checks WHERE NOT (name = ANY($1::text[]))', [checks.map((c) => c.name)]);
  for (const c of checks) {
    await db.query(
      `INSERT INTO source_checks (name, address, ehlo, forward, reverse, ok, warning, checked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (name) DO UPDATE SET address = EXCLUDED.address, ehlo = EXCLUDED.ehlo, forward = EXCLUDED.forward,
         reverse = EXCLUDED.reverse, ok = EXCLUDED.ok, warning = EXCLUDED.warning, checked_at = EXCLUDED.checked_at`,
      [c.name, c.address, c.ehlo, c.forward, c.reverse, c.ok, c.warning, c.checkedAt],
    );
  }
}

// Every source's last check, in name order (deployment-wide: sources are not a tenant's).
export async function listSourceChecks(db: Queryable): Promise<SourceCheck[]> {
  const { rows } = await db.query('SELECT * FROM source_checks ORDER BY name');
  return rows.map((r) => ({
    name: r.name, address: r.address, ehlo: r.ehlo, forward: r.forward, reverse: r.reverse, ok: r.ok, warning: r.warning, checkedAt: r.checked_at,
  }));
}
