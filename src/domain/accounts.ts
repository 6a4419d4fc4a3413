import { getAccount, insertAccount, listAccounts, updateAccountPools, type AccountRow } from '../db/queries/accounts.js';
import type { Queryable } from '../db/pool.js';
import { invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';

import { STREAMS, type Stream } from '../sending-identity.js';

export { STREAMS, type Stream };

export interface Account {
  id: string;
  name: string;
  monthlyQuota: number | null;
  createdAt: string;
  /** Pools the account sends through instead of its streams' own; null: the stream's pool. */
  pools: { transactional: string | null; broadcast: string | null };
}

export function toAccount(r: AccountRow): Account {
  return {
    id: r.id,
    name: r.name,
    monthlyQuota: r.monthly_quota,
    createdAt: r.created_at.toISOString(),
    pools: { transactional: r.pool_transactional, broadcast: r.pool_broadcast },
  };
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

/**
 * Sends an account's mail of one stream (or both) through `pool`; `default` undoes it. The
 * pool must be one the delivery policy defines (`knownPools`), so a typo cannot strand mail.
 */
export async function setAccountPool(db: Queryable, knownPools: string[], accountId: string, pool: string, stream?: Stream): Promise<Account> {
  if (stream !== undefined && !STREAMS.includes(stream)) throw invalid('stream', `must be ${STREAMS.join(' or ')}`);
  if (pool !== 'default' && !knownPools.includes(pool)) {
    const known = knownPools;
    throw invalid('pool', known.length === 0
      ? `"${pool}" is not a pool: the delivery policy (POSTLINE_DELIVERY_POLICY) defines no sources and pools`
      : `"${pool}" is not a pool of the delivery policy (pools: ${known.join(', ')}, or default)`);
  }
  const value = pool === 'default' ? null : pool;
  const row = await updateAccountPools(db, accountId, stream ? { [stream]: value } : { transactional: value, broadcast: value });
  if (!row) throw notFound(`account ${accountId}`);
  return toAccount(row);
}
