import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requireAccount } from '../../../domain/accounts.js';
import { poolFor, STREAMS } from '../../../sending-identity.js';
import { sourcesStatus } from '../../../delivery/sources/status.js';

const DnsCheck = Type.Object({
  ok: Type.Boolean({ description: 'The EHLO name resolves to the address and the address\'s PTR record names the EHLO name' }),
  forward: Type.Array(Type.String(), { description: 'Addresses the EHLO name resolves to' }),
  reverse: Type.Array(Type.String(), { description: 'Names the PTR records of the address give' }),
  warning: Type.Union([Type.String(), Type.Null()], { description: 'What to fix in DNS; null when ok' }),
  checkedAt: Type.String({ format: 'date-time' }),
}, { description: 'The forward-confirmed reverse DNS check made when Postline last started' });

const SourceItem = Type.Object({
  name: Type.String(),
  address: Type.String({ description: 'The IP address mail leaves from' }),
  ehlo: Type.String({ description: 'The name it greets receivers with' }),
  pools: Type.Array(Type.String(), { description: 'Which of this account\'s pools it belongs to' }),
  dns: Type.Union([DnsCheck, Type.Null()], { description: 'null until a start has checked it' }),
  warmup: Type.Union([
    Type.Object({
      start: Type.String({ description: 'The plan\'s first UTC day' }),
      day: Type.Integer({ description: 'Day of the plan today: 1 on the start day, 0 or less before it' }),
      cap: Type.Union([Type.Integer(), Type.Null()], { description: 'Most messages per provider today; null after the plan\'s last day' }),
      sentToday: Type.Integer({ description: 'Sent today from this source, all providers together' }),
      providers: Type.Array(Type.Object({
        name: Type.String({ description: 'The provider (gmail, microsoft, …) or an MX-rolled-up destination (`mx:<hosts>`)' }),
        sentToday: Type.Integer({ description: 'Sent today to it: the count `cap` applies to' }),
      }), { description: 'Sent today per provider, busiest first; a provider not yet sent to today is absent (0)' }),
    }),
    Type.Null(),
  ], { description: 'Warm-up progress (docs/sending-identity.md#warm-up); null without a plan' }),
});

const Sources = Type.Object({
  pools: Type.Object({ transactional: Type.String(), broadcast: Type.String() }, { description: 'The pools this account sends through, as on GET /api/v1/me' }),
  data: Type.Array(SourceItem, { description: 'The sources of those pools; empty when the deployment sends without sources' }),
});

export async function deliverabilityRoutes(app: FastifyInstance): Promise<void> {
  app.get('/api/v1/deliverability/sources', {
    schema: {
      operationId: 'listSendingSources',
      summary: 'Source addresses this account sends from, with their DNS check and warm-up',
      description: 'The sources of the pools the account\'s transactional and broadcast mail leave through (docs/sending-identity.md), each with the result of the forward-confirmed reverse DNS check made at start-up (a mismatch is a warning to fix in DNS, not a refusal) and its warm-up progress today. Sources of pools the account does not use are not shown.',
      tags: ['account'],
      response: {
        200: {
          ...Sources,
          examples: [{
            pools: { transactional: 'transactional', broadcast: 'broadcast' },
            data: [{ name: 'tx1', address: '203.0.113.10', ehlo: 'mta1.example.com', pools: ['transactional'], dns: { ok: false, forward: ['203.0.113.10'], reverse: [], warning: 'source tx1: forward-confirmed reverse DNS fails: 203.0.113.10 has no PTR record (it must name mta1.example.com)', checkedAt: '2026-11-27T02:00:00.000Z' }, warmup: { start: '2026-11-25', day: 3, cap: 200, sentToday: 165, providers: [{ name: 'gmail', sentToday: 120 }, { name: 'microsoft', sentToday: 45 }] } }],
          }],
        },
      },
    },
  }, async (request) => {
    const identity = app.deps.config.deliveryPolicy.identity;
    const account = await requireAccount(app.deps.pool, request.auth.accountId);
    const pools = { transactional: poolFor(identity, 'transactional', account.pools.transactional), broadcast: poolFor(identity, 'broadcast', account.pools.broadcast) };
    const mine = new Set(STREAMS.map((s) => pools[s]));
    const all = await sourcesStatus(app.deps.pool, identity, app.deps.clock.now());
    // Only the pools this account uses: another tenant's dedicated addresses are not its business.
    const data = all
      .map((s) => ({ ...s, pools: s.pools.filter((p) => mine.has(p)) }))
      .filter((s) => s.pools.length > 0)
      .map(({ name, address, ehlo, pools: inPools, dns, warmup }) => ({
        name, address, ehlo, pools: inPools, warmup,
        dns: dns ? { ok: dns.ok, forward: dns.forward, reverse: dns.reverse, warning: dns.warning, checkedAt: dns.checkedAt } : null,
      }));
    return { pools, data };
  });
}
