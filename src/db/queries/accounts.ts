import type { Queryable } from '../pool.js';

export interface AccountRow {
  id: string;
  name: string;
  monthly_quota: number | null;
  created_at: Date;
  /** The account's own pools (docs/sending-identity.md); NULL: the stream's pool. */
  pool_transactional: string | null;
  pool_broadcast: string | null;
}

// Plain insert; ids come from the caller so they are time-ordered (UUIDv7).
export async function insertAccount(db: Queryable, a: { id: string; name: string; monthlyQuota: number | null }): Promise<AccountRow> {
  const { rows } = await db.query<AccountRow>(
    'INSERT INTO accounts (id, name, monthly_quota) VALUES ($1, $2, $3) RETURNING *',
    [a.id, a.name, a.monthlyQuota],
  );
  return rows[0];
}

// Newest last: the CLI prints accounts in creation order.
export async function listAccounts(db: Queryable): Promise<AccountRow[]> {
  const { rows } = await db.query<AccountRow>('SELECT * FROM accounts ORDER BY id');
  return rows;
}

export async function getAccount(db: Queryable, id: string): Promise<AccountRow | null> {
  const { rows } = await db.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
  return rows[0] ?? null;
}

// Used once, at first start, to decide whether to create the default account.
export async function countAccounts(db: Queryable): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM accounts');
  return rows[0].n as number;
}

// Sets one or both of an account's pools; a column left out keeps its value. NULL undoes.
export async function updateAccountPools(
  db: Queryable,
  id: string,
  pools: { transactional?: string | null; broadcast?: string | null },
): Promise<AccountRow | null> {
  const { rows } = await db.query<AccountRow>(
    `UPDATE accounts SET
       pool_transactional = CASE WHEN $2 THEN $3 ELSE pool_transactional END,
       pool_broadcast     = CASE WHEN $4 THEN $5 ELSE pool_broadcast END
     WHERE id = $1 RETURNING *`,
    [id, 'transactional' in pools, pools.transactional ?? null, 'broadcast' in pools, pools.broadcast ?? null],
  );
  return rows[0] ?? null;
}
