import type { Command } from 'commander';
import { systemClock } from '../clock.js';
import { deliveryStatus } from '../delivery/status.js';
import { output, table, withDatabase } from './context.js';

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
}
