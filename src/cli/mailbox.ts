import { finishPage, keyset, pageOf } from '../db/pagination.js';
import type { Command } from 'commander';
import { getCaptured, listCaptured } from '../db/queries/captured.js';
import { output, table, withDatabase } from './context.js';

/** `postline mailbox`: what POSTLINE_DELIVERY=capture kept instead of sending. */
export function registerMailboxCommands(program: Command): void {
  const mailbox = program.command('mailbox').description('Captured messages (POSTLINE_DELIVERY=capture)');
  mailbox
    .command('list', { isDefault: true })
    .description('List captured messages, newest first')
    .option('--account <id>', 'only this account')
    .option('--limit <n>', 'how many', '20')
    .option('--json', 'print JSON')
    .action(async (o: { account?: string; limit: string; json?: boolean }) => {
      const page = pageOf({ limit: Math.min(500, Math.max(1, Number(o.limit) || 20)), order: 'desc' });
      const rows = await withDatabase(({ pool }) => listCaptured(pool, o.account ?? null, { ...keyset(page, 'id', 2), limit: page.limit }));
      const { data } = finishPage(rows, page, (r) => r.id);
      const items = data.map((r) => ({ id: r.id, to: r.envelope_to, subject: r.subject, capturedAt: r.captured_at.toISOString() }));
      output(o.json, items, () => table(items, ['id', 'to', 'subject', 'capturedAt']));
    });
  mailbox
    .command('show <messageId>')
    .description('Print the raw message exactly as it would have been sent')
    .action(async (id: string) => {
      const row = await withDatabase(({ pool }) => getCaptured(pool, null, id));
      if (!row) throw new Error(`no captured message ${id}`);
      process.stdout.write(row.raw);
    });
}
