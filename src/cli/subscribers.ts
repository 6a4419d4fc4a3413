import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { Pool } from '../db/pool.js';
import { createImport, getImport, runImport, type ImportSource, type SubscriberImport } from '../domain/audience/imports.js';
import { accountOfList } from '../domain/audience/lists.js';
import { output, withDatabase } from './context.js';

interface Reporter {
  update(p: SubscriberImport): void;
  stop(): void;
}

/** A progress bar on a terminal, one line per update otherwise, nothing with --json. */
function reporter(json: boolean | undefined, total: number): Reporter {
  if (json) return { update() {}, stop() {} };
  if (process.stdout.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: 'importing [{bar}] {percentage}% | {value}/{total} rows | created {created} updated {updated} skipped {skipped} | ETA {eta_formatted}' },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { created: 0, updated: 0, skipped: 0 });
    return {
      update: (p) => bar.update(p.processed, { created: p.created, updated: p.updated, skipped: p.skipped }),
      stop: () => bar.stop(),
    };
  }
  let last = -1;
  return {
    update(p) {
      if (p.processed === last) return;
      last = p.processed;
      process.stdout.write(`progress ${p.processed}/${p.total} rows (created ${p.created}, updated ${p.updated}, skipped ${p.skipped})\n`);
    },
    stop() {},
  };
}

function readSource(file: string, format: string | undefined): ImportSource {
  const text = readFileSync(file, 'utf8');
  const kind = format ?? (extname(file).toLowerCase() === '.json' ? 'json' : 'csv');
  if (kind === 'csv') return { format: 'csv', text };
  if (kind !== 'json') throw new Error(`--format must be csv or json, got "${kind}"`);
  try {
    return { format: 'json', rows: JSON.parse(text) };
  } catch (err) {
    throw new Error(`${file} is not valid JSON: ${(err as Error).message}`);
  }
}

/** When a running worker claimed the job first, follow its progress instead. */
async function follow(pool: Pool, accountId: string, id: string, r: Reporter): Promise<SubscriberImport> {
  for (;;) {
    const p = await getImport(pool, accountId, id);
    r.update(p);
    if (p.status === 'completed' || p.status === 'failed') return p;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function summary(p: SubscriberImport): string {
  const lines = [`import ${p.id} ${p.status}: ${p.processed}/${p.total} rows, created ${p.created}, updated ${p.updated}, skipped ${p.skipped}`];
  for (const e of p.errors.slice(0, 20)) lines.push(`  row ${e.row}${e.email ? ` (${e.email})` : ''}: ${e.message}`);
  if (p.errorCount > 20) lines.push(`  … ${p.errorCount - 20} more row errors (GET /api/v1/imports/${p.id})`);
  if (p.failure) lines.push(`  failure: ${p.failure}`);
  return lines.join('\n');
}

export function registerSubscriberCommands(program: Command): void {
  const subscribers = program.command('subscribers').description('Manage subscribers');
  subscribers
    .command('import <file>')
    .description('Import subscribers from a CSV (header row with an email column) or JSON array file into a list')
    .requiredOption('--list <id>', 'id of the list to import into')
    .option('--format <format>', 'csv or json (default: from the file extension)')
    .option('--json', 'print the finished import as JSON (no progress output)')
    .action(async (file: string, o: { list: string; format?: string; json?: boolean }) => {
      const source = readSource(file, o.format);
      const result = await withDatabase(async ({ pool }) => {
        const accountId = await accountOfList(pool, o.list);
        const created = await createImport(pool, accountId, { listId: o.list, source });
        const r = reporter(o.json, created.total);
        try {
          // Run it here (the CLI may be the only process up); if a worker got it first, watch.
          const done = await runImport(pool, { id: created.id, onProgress: (p) => r.update(p) });
          return done ?? (await follow(pool, accountId, created.id, r));
        } finally {
          r.stop();
        }
      });
      output(o.json, result, () => summary(result));
      if (result.status === 'failed') process.exitCode = 1;
    });
}
