import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requireAccount } from '../../../domain/accounts.js';
import { listSourceChecks } from '../../../db/queries/source-checks.js';
import { poolFor, STREAMS } from '../../../delivery/sources/identity.js';
import { warmupProgress } from '../../../delivery/sources/status.js';

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
      sentToday: Type.Record(Type.String(), Type.Integer(), { description: 'Sent today per provider (gmail, microsoft, …, or an MX-rolled-up destination)' }),
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
            data: [{ name: 'tx1', address: '203.0.113.10', ehlo: 'mta1.example.com', pools: ['transactional'], dns: { ok: false, forward: ['203.0.113.10'], reverse: [], warning: 'source tx1: forward-confirmed reverse DNS fails: 203.0.113.10 has no PTR record (it must name mta1.example.com)', checkedAt: '2026-11-27T02:00:00.000Z' }, warmup: { start: '2026-11-25', day: 3, cap: 200, sentToday: { gmail: 120, microsoft: 45 } } }],
          }],
        },
      },
    },
  }, async (request) => {
    const identity = app.deps.config.deliveryPolicy.identity;
    const account = await requireAccount(app.deps.pool, request.auth.accountId);
    const pools = { transactional: poolFor(identity, 'transactional', account.pools.transactional), broadcast: poolFor(identity, 'broadcast', account.pools.broadcast) };
    const mine = [...new Set(STREAMS.map((s) => pools[s]))];
    const checks = new Map((await listSourceChecks(app.deps.pool)).map((c) => [c.name, c]));
    const warmup = await warmupProgress(app.deps.pool, identity, app.deps.clock.now());
    const data = identity.sources
      .map((s) => ({ source: s, in: mine.filter((p) => identity.pools[p]?.includes(s.name)) }))
      .filter((x) => x.in.length > 0)
      .map(({ source, in: inPools }) => {
        const c = checks.get(source.name);
        // A check of an older policy's source of the same name but another address does not count.
        const dns = c && c.address === source.address && c.ehlo === source.ehlo
          ? { ok: c.ok, forward: c.forward, reverse: c.reverse, warning: c.warning, checkedAt: c.checkedAt.toISOString() }
          : null;
        return { name: source.name, address: source.address, ehlo: source.ehlo, pools: inPools, dns, warmup: warmup.get(source.name) ?? null };
      });
    return { pools, data };
  });
}
