import { createAccount } from '../../src/domain/accounts.js';
import { createApiKey } from '../../src/domain/keys/api-keys.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../../src/domain/domains/domains.js';
import type { BenchCluster } from './server.js';

export interface BenchAudience {
  accountId: string;
  listId: string;
  /** Calls the cluster's API with the account's live key; a status ≥ 300 throws. */
  call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
}

/**
 * What the campaign benchmarks start from: an account with a live key and the verified sender
 * domain `bench.test`, and one list of `total` active subscribers written in one statement
 * (every third on plan "pro").
 */
export async function createBenchAudience(cluster: BenchCluster, total: number): Promise<BenchAudience> {
  const pool = cluster.db.pool;
  const account = await createAccount(pool, { name: 'bench' });
  const key = (await createApiKey(pool, { accountId: account.id, mode: 'live' })).key;
  const domain = await createDomain(pool, { accountId: account.id, name: 'bench.test', now: new Date() }, { secret: cluster.config.secret, targets: dnsTargetsOf(cluster.config) });
  await forceVerifyDomain(pool, domain.id, new Date());
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${cluster.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const list = await call('POST', '/api/v1/lists', { name: 'Everyone' });
  await pool.query(
    `WITH s AS (
       INSERT INTO subscribers (id, account_id, email, email_key, name, status, attributes, created_at, updated_at)
       SELECT 'sub_' || lpad(to_hex(g), 32, '0'), $1, 'user' || g || '@example.net', 'user' || g || '@example.net', 'User ' || g, 'active',
              jsonb_build_object('plan', CASE WHEN g % 3 = 0 THEN 'pro' END), now(), now()
         FROM generate_series(1, $2::int) g
       RETURNING id)
     INSERT INTO subscriber_lists (list_id, subscriber_id, account_id, created_at) SELECT $3, id, $1, now() FROM s`,
    [account.id, total, list.id],
  );
  await pool.query('VACUUM ANALYZE subscribers, subscriber_lists');
  return { accountId: account.id, listId: list.id as string, call };
}
