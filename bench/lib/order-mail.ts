/**
 * The send bench:delivery and bench:accept measure: an account with a live key and the verified
 * sending domain bench.test, and the ~4 KB order e-mail template with per-message variables.
 */
import { createAccount } from '../../src/domain/accounts.js';
import { createApiKey } from '../../src/domain/keys/api-keys.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../../src/domain/domains/domains.js';
import type { BenchCluster } from './server.js';

export const ORDER_HTML =
  '<html><body><h1>Hello {{ name }}</h1>' +
  '<p>Your order <b>{{ order }}</b> has shipped. <a href="https://bench.test/track?o={{ order }}">Track it</a> or <a href="https://bench.test/help">get help</a>.</p>' +
  '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>'.repeat(28) +
  '</body></html>';

/** A new account with a live API key and bench.test verified; returns the key. */
export async function orderSender(cluster: BenchCluster): Promise<string> {
  const pool = cluster.db.pool;
  const account = await createAccount(pool, { name: 'bench' });
  const key = (await createApiKey(pool, { accountId: account.id, mode: 'live' })).key;
  const domain = await createDomain(pool, { accountId: account.id, name: 'bench.test', now: new Date() }, { secret: cluster.config.secret, targets: dnsTargetsOf(cluster.config) });
  await forceVerifyDomain(pool, domain.id, new Date());
  return key;
}
