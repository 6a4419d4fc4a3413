import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pool } from '../../src/db/pool.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../../src/domain/domains/domains.js';
import { SendPipeline } from '../../src/domain/sending/send-pipeline.js';
import { bootApp, createTestAccount } from '../helpers/app.js';

/**
 * The send pipeline keeps verified sender domains for a few seconds (domain/sending/
 * send-pipeline.ts). The sends of a burst that find no fresh entry share one lookup: each asking
 * on its own put a pool's worth of identical queries in flight, and the pool opened a
 * connection for each.
 */

const { pool, clock, config } = await bootApp();
const account = await createTestAccount(pool, 'Acme');
const domain = await createDomain(pool, { accountId: account.accountId, name: 'acme.test', now: clock.now() }, { secret: config.secret, targets: dnsTargetsOf(config) });
await forceVerifyDomain(pool, domain.id, clock.now());
const other = await createTestAccount(pool, 'Globex');

/** The same pool, counting the sender-domain lookups made through it. */
function countingDomainLookups(real: Pool): { pool: Pool; lookups: () => number } {
  let n = 0;
  const query = (...args: Parameters<Pool['query']>) => {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
    if (/FROM domains WHERE account_id = \$1 AND name = \$2 AND status = 'verified'/.test(text)) n++;
    return (real.query as (...a: unknown[]) => unknown)(...args);
  };
  const counted = new Proxy(real, { get: (target, prop) => (prop === 'query' ? query : Reflect.get(target, prop, target)) });
  return { pool: counted, lookups: () => n };
}

const send = (to: string, from = 'hello@acme.test') => ({ to, from: { email: from }, subject: 'Hi', html: '<p>Hi</p>' });

test('sender domain: the sends of a burst that find no cached entry share one lookup, and each is accepted', async () => {
  const counting = countingDomainLookups(pool);
  const pipeline = new SendPipeline({ pool: counting.pool, config, clock });
  const sender = { accountId: account.accountId, mode: 'live' as const, monthlyQuota: null };
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => pipeline.send(sender, send(`r${i}@example.net`, i % 2 ? 'hello@ACME.test' : 'hello@acme.test'))));
  assert.equal(new Set(results.map((r) => r.id)).size, 12);
  assert.equal(counting.lookups(), 1, 'one lookup for the twelve concurrent sends of one domain');
  await pipeline.send(sender, send('later@example.net'));
  assert.equal(counting.lookups(), 1, 'a send within the cache time asks nothing');
});

test('sender domain: a shared lookup is per account, so another account\'s burst for the same name is refused on its own', async () => {
  const counting = countingDomainLookups(pool);
  const pipeline = new SendPipeline({ pool: counting.pool, config, clock });
  const acme = { accountId: account.accountId, mode: 'live' as const, monthlyQuota: null };
  const globex = { accountId: other.accountId, mode: 'live' as const, monthlyQuota: null };
  const results = await Promise.allSettled([
    pipeline.send(acme, send('a@example.net')),
    pipeline.send(globex, send('b@example.net')),
    pipeline.send(acme, send('c@example.net')),
    pipeline.send(globex, send('d@example.net')),
  ]);
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'rejected']);
  for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as { code?: string }).code, 'sender_domain_unverified');
  assert.equal(counting.lookups(), 2, 'one lookup per account');
});
