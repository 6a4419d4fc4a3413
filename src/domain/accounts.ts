import { getAccount, insertAccount, listAccounts, type AccountRow } from '../db/queries/accounts.js';
import type { Queryable } from '../db/pool.js';
import { invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';

export interface Account {
  id: string;
  name: string;
  monthlyQuota: number | null;
  createdAt: string;
}

export function toAccount(r: AccountRow): Account {
  return { id: r.id, name: r.name, monthlyQuota: r.monthly_quota, createdAt: r.created_at.toISOString() };
}

export async function createAccount(db: Queryable, input: { name: string; monthlyQuota?: number | null }): Promise<Account> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 200) throw invalid('name', 'must be 1 to 200 characters');
  const quota = input.monthlyQuota ?? null;
  if (quota !== null && (!Number.isInteger(quota) || quota < 0)) throw invalid('quota', 'must be a non-negative integer');
  return toAccount(await insertAccount(db, { id: newId('acc'), name, monthlyQuota: quota }));
}

export async function allAccounts(db: Queryable): Promise<Account[]> {
  return (await listAccounts(db)).map(toAccount);
}

export async function requireAccount(db: Queryable, id: string): Promise<Account> {
  const row = await getAccount(db, id);
  if (!row) throw notFound(`account ${id}`);
  return toAccount(row);
}
