import type { Queryable } from '../pool.js';
import type { CachedStsPolicy, StsPolicyStore } from '../../mail/mta-sts/resolver.js';
import type { StsMode } from '../../mail/mta-sts/policy.js';

interface PolicyRow {
  domain: string;
  policy_id: string;
  mode: StsMode;
  max_age: number;
  mx: string[];
  policy_text: string;
  fetched_at: Date;
  expires_at: Date;
}

// One row per recipient domain, expired or not: an expired row is still what a changed TXT
// id is compared with, and the next fetch overwrites it.
export async function getStsPolicy(db: Queryable, domain: string): Promise<CachedStsPolicy | null> {
  const { rows } = await db.query<PolicyRow>('SELECT * FROM mta_sts_policies WHERE domain = $1', [domain]);
  const r = rows[0];
  if (!r) return null;
  return {
    domain: r.domain,
    id: r.policy_id,
    policy: { mode: r.mode, maxAgeSeconds: r.max_age, mx: r.mx },
    text: r.policy_text,
    fetchedAt: r.fetched_at,
    expiresAt: r.expires_at,
  };
}

// Upsert: two workers fetching the same new policy at once both write the same thing.
export async function putStsPolicy(db: Queryable, p: CachedStsPolicy): Promise<void> {
  await db.query(
    `INSERT INTO mta_sts_policies (domain, policy_id, mode, max_age, mx, policy_text, fetched_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (domain) DO UPDATE SET policy_id = EXCLUDED.policy_id, mode = EXCLUDED.mode, max_age = EXCLUDED.max_age,
       mx = EXCLUDED.mx, policy_text = EXCLUDED.policy_text, fetched_at = EXCLUDED.fetched_at, expires_at = EXCLUDED.expires_at`,
    [p.domain, p.id, p.policy.mode, p.policy.maxAgeSeconds, p.policy.mx, p.text, p.fetchedAt, p.expiresAt],
  );
}

/** The policy cache of the whole deployment, for StsPolicyResolver. */
export function databaseStsPolicyStore(db: Queryable): StsPolicyStore {
  return { get: (domain) => getStsPolicy(db, domain), put: (entry) => putStsPolicy(db, entry) };
}
