import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { checkFile, listEmlFiles, summarise, type CheckedFile, type CheckSummary } from '../mail/bounces/check.js';

/**
 * `postline bounces check DIR`: what Postline makes of each mail in a folder of `.eml` files
 * (raw messages as received; a leading mbox `From ` line is fine), through the same reader
 * as the live intake, without a database. For operators checking their own bounces.
 */
export function registerBounceCommands(program: Command): void {
  const bounces = program.command('bounces').description('Bounce mail tools');
  bounces
    .command('check')
    .description('Read every .eml file in DIR as the inbound intake would: one line per file, then a summary (--json: one object per line per file)')
    .argument('<dir>', 'folder of .eml files (searched recursively)')
    .option('--json', 'one JSON object per line per file: {file, kind, recipients: [{email, status, reason, dead}]}')
    .action(async (dir: string, o: { json?: boolean }) => {
      const files = await listEmlFiles(dir);
      // The lines themselves show progress on a terminal; when they go to a file, a bar on stderr does.
      const bar = !o.json && !process.stdout.isTTY && process.stderr.isTTY && files.length > 20 ? new cliProgress.SingleBar({ stream: process.stderr }, cliProgress.Presets.shades_classic) : null;
      bar?.start(files.length, 0);
      const results: CheckedFile[] = [];
      for (const file of files) {
        const r = await checkFile(dir, file);
        results.push(r);
        process.stdout.write((o.json ? JSON.stringify(r) : line(r)) + '\n');
        bar?.increment();
      }
      bar?.stop();
      if (!o.json) process.stdout.write(summaryText(summarise(results)) + '\n');
    });
}

function line(r: CheckedFile): string {
  if (r.error) return `${r.file}  error: ${r.error}`;
  if (r.kind !== 'bounce') return `${r.file}  ${r.kind}`;
  if (r.recipients.length === 0) return `${r.file}  bounce  (no recipient recognised)`;
  const who = r.recipients.map((x) => `${x.email} ${x.status ?? '-'} ${x.reason}${x.dead ? ' dead' : ''}`).join('; ');
  return `${r.file}  bounce  ${who}`;
}

function summaryText(s: CheckSummary): string {
  const kinds = Object.entries(s.kinds).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ');
  const reasons = Object.entries(s.reasons).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ');
  return [
    `${s.files} files: ${kinds || 'none'}`,
    `${s.recipients} failed recipients, ${s.dead} dead (suppressed by the live intake)${s.bouncesWithoutRecipient ? `; ${s.bouncesWithoutRecipient} bounces without a recognised recipient` : ''}`,
    ...(reasons ? [`reasons: ${reasons}`] : []),
  ].join('\n');
}
