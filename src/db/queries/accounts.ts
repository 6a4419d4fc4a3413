import type { Queryable } from '../pool.js';

export interface AccountRow {
  id: string;
  name: string;
  monthly_quota: number | null;
  created_at: Date;
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
