import type { Command } from 'commander';
import { systemClock } from '../clock.js';
import { deliveryStatus, type DestinationStatus } from '../delivery/status.js';
import { sourcesStatus, type SourceStatus } from '../delivery/sources/status.js';
import { output, table, withDatabase } from './context.js';

/**
 * `postline delivery status [--json]`: traffic shaping per destination and every source's
 * DNS check and warm-up, for every worker together (docs/delivery-policy.md#status). The
 * JSON is `{generatedAt, data, sources}`: `data` as `GET /api/v1/delivery/status` answers it,
 * `sources` every source of the policy (the API shows an account only its own pools').
 */
export function registerDeliveryCommands(program: Command): void {
  const delivery = program.command('delivery').description('Outbound delivery');
  delivery
    .command('status')
    .description('Every destination with activity in the last hour (connections, messages in flight and sent in the last minute, limits, suspension) and every source address (pools, DNS check, warm-up today)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      await withDatabase(async ({ config, pool }) => {
        const now = systemClock.now();
        const data = await deliveryStatus(pool, config.deliveryPolicy, now);
        const sources = await sourcesStatus(pool, config.deliveryPolicy.identity, now);
        output(o.json, { generatedAt: now.toISOString(), data, sources }, () => destinationsTable(data) + sourcesText(sources));
      });
    });
}

function destinationsTable(rows: DestinationStatus[]): string {
  if (rows.length === 0) return 'No delivery in the last hour.';
  return table(
    rows.map((r) => ({
      name: r.name,
      provider: r.provider,
      source: r.source,
      connections: `${r.connections}/${r.limits.maxConnections}`,
      inFlight: r.inFlight,
      sentLastMinute: `${r.sentLastMinute}/${r.limits.messagesPerMinute ?? '∞'}`,
      perConnection: r.limits.messagesPerConnection,
      rate: `${Math.round(r.rateFactor * 100)}%`,
      suspendedUntil: r.suspendedUntil,
      lastThrottleReply: r.lastThrottleReply?.slice(0, 60) ?? null,
    })),
    ['name', 'provider', 'source', 'connections', 'inFlight', 'sentLastMinute', 'perConnection', 'rate', 'suspendedUntil', 'lastThrottleReply'],
  );
}

/** Without sources in the policy the kernel picks the address: nothing to show. */
function sourcesText(sources: SourceStatus[]): string {
  if (sources.length === 0) return '';
  const rows = table(
    sources.map((x) => ({
      source: x.name,
      address: x.address,
      ehlo: x.ehlo,
      pools: x.pools.join(','),
      dns: x.dns ? (x.dns.ok ? 'ok' : 'WARNING') : 'unchecked',
      warmup: x.warmup ? warmupText(x.warmup) : '-',
    })),
    ['source', 'address', 'ehlo', 'pools', 'dns', 'warmup'],
  );
  const warnings = sources.filter((x) => x.dns?.warning).map((x) => `\n${x.dns!.warning}`).join('');
  return `\n\n${rows}${warnings}`;
}

function warmupText(w: NonNullable<SourceStatus['warmup']>): string {
  if (w.day < 1) return `starts ${w.start}`;
  const perProvider = w.providers.map((p) => `${p.name} ${p.sentToday}`).join(', ');
  return `day ${w.day}, cap ${w.cap ?? 'none'} per provider, sent ${w.sentToday}${perProvider ? ` (${perProvider})` : ''}`;
}
