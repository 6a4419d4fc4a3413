import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import type { Pool } from '../../src/db/pool.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain, removeDomain } from '../../src/domain/domains/domains.js';
import { SendPipeline } from '../../src/domain/sending/send-pipeline.js';
import { bootApp, createTestAccount } from '../helpers/app.js';

/**
 * The send pipeline keeps verified sender domains for a few seconds (domain/sending/
 * send-pipeline.ts). The sends of a burst that find no fresh entry share one lookup: each asking
 * on its own put a pool's worth of identical queries in flight, and the pool opened a
 * connection for each.
 */

const { pool, clock, config } = await bootApp({ clock: new ManualClock('2026-11-27T20:00:00.000Z') });
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

test('sender domain: a domain removed meanwhile is refused as unverified, by a process that still holds it and once its cache time passed', async () => {
  const own = await createTestAccount(pool, 'Initech');
  const removed = await createDomain(pool, { accountId: own.accountId, name: 'initech.test', now: clock.now() }, { secret: config.secret, targets: dnsTargetsOf(config) });
  await forceVerifyDomain(pool, removed.id, clock.now());
  const counting = countingDomainLookups(pool);
  const pipeline = new SendPipeline({ pool: counting.pool, config, clock });
  const sender = { accountId: own.accountId, mode: 'live' as const, monthlyQuota: null };
  await pipeline.send(sender, send('first@example.net', 'hello@initech.test'));
  await removeDomain(pool, own.accountId, removed.id);
  (clock as ManualClock).advance(9_999);
  // Still cached here: the store meets the removed domain's foreign key, and the send is refused, not a 500.
  await assert.rejects(pipeline.send(sender, send('cached@example.net', 'hello@initech.test')), (err: { code?: string }) => err.code === 'sender_domain_unverified');
  assert.equal(counting.lookups(), 1, 'answered from the cache');
  (clock as ManualClock).advance(1);
  await assert.rejects(pipeline.send(sender, send('after@example.net', 'hello@initech.test')), (err: { code?: string }) => err.code === 'sender_domain_unverified');
  assert.equal(counting.lookups(), 2, 'looked up again once the cache time passed');
});
