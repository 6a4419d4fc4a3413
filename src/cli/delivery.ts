import type { Command } from 'commander';
import { systemClock } from '../clock.js';
import { deliveryStatus } from '../delivery/status.js';
import { output, table, withDatabase } from './context.js';
import { sourcesStatus } from '../delivery/sources/status.js';

/** `postline delivery status [--json]`: traffic shaping per destination, for every worker together (docs/delivery-policy.md). */
export function registerDeliveryCommands(program: Command): void {
  const delivery = program.command('delivery').description('Outbound delivery');
  delivery
    .command('status')
    .description('Every destination with activity in the last hour: connections, messages in flight and sent in the last minute, limits, suspension')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      await withDatabase(async ({ config, pool }) => {
        const rows = await deliveryStatus(pool, config.deliveryPolicy, systemClock.now());
        output(o.json, rows, () =>
          table(
            rows.map((r) => ({
              name: r.name,
              provider: r.provider,
              connections: `${r.connections}/${r.limits.maxConnections}`,
              inFlight: r.inFlight,
              sentLastMinute: `${r.sentLastMinute}/${r.limits.messagesPerMinute ?? '∞'}`,
              perConnection: r.limits.messagesPerConnection,
              rate: `${Math.round(r.rateFactor * 100)}%`,
              suspendedUntil: r.suspendedUntil,
              lastThrottleReply: r.lastThrottleReply?.slice(0, 60) ?? null,
            })),
            ['name', 'provider', 'connections', 'inFlight', 'sentLastMinute', 'perConnection', 'rate', 'suspendedUntil', 'lastThrottleReply'],
          ),
        );
      });
    });
  delivery
    .command('sources')
    .description('The source addresses of the delivery policy: pools, start-up DNS check, warm-up progress per provider today (docs/sending-identity.md)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      await withDatabase(async ({ config, pool }) => {
        const sources = await sourcesStatus(pool, config.deliveryPolicy.identity, systemClock.now());
        output(o.json, { sources }, () =>
          table(
            sources.map((x) => ({
              name: x.name,
              address: x.address,
              ehlo: x.ehlo,
              pools: x.pools.join(','),
              dns: x.dns ? (x.dns.ok ? 'ok' : 'WARNING') : 'unchecked',
              warmup: x.warmup ? `day ${x.warmup.day}, cap ${x.warmup.cap ?? 'none'}, sent ${Object.entries(x.warmup.sentToday).map(([p, n]) => `${p}:${n}`).join(' ') || '0'}` : '-',
            })),
            ['name', 'address', 'ehlo', 'pools', 'dns', 'warmup'],
          ) + sources.filter((x) => x.dns?.warning).map((x) => `\n${x.dns!.warning}`).join(''),
        );
      });
    });
}
