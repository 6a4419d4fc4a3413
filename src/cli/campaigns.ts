import { readFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { notifySoon } from '../db/notify.js';
import { withTransaction, type Pool } from '../db/pool.js';
import type { CampaignStatus } from '../db/queries/campaigns/campaigns.js';
import { requireAccount } from '../domain/accounts.js';
import { toDefinition, type CampaignInput } from '../domain/campaigns/definition.js';
import {
  accountOfCampaign, cancelCampaign, createCampaign, listCampaigns, pauseCampaign, resumeCampaign, sendCampaign,
} from '../domain/campaigns/lifecycle.js';
import { loadCampaignReport, type CampaignReport } from '../domain/campaigns/report.js';
import { output, table, withDatabase } from './context.js';

const collect = (v: string, prev: string[] = []) => [...prev, v];

async function reportOf(pool: Pool, id: string): Promise<CampaignReport> {
  const accountId = await accountOfCampaign(pool, id);
  return loadCampaignReport(pool, accountId, id, new Date());
}

function describe(r: CampaignReport): string {
  const c = r.counts;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `${r.id}  ${r.name}  ${r.status}${r.pauseReason ? ` (${r.pauseReason})` : ''}`,
    `progress   ${r.progress.percent}%  recipients ${r.progress.recipients}  queued ${r.progress.queued}  remaining ${r.progress.remaining}` +
      (r.progress.etaSeconds !== null ? `  eta ${r.progress.etaSeconds}s` : ''),
    `delivery   sent ${c.sent}  delivered ${c.delivered}  deferred ${c.deferred}  hard ${c.hardBounced}  soft ${c.softBounced}  cancelled ${c.cancelled}`,
    `engagement opens ${c.opens} (unique ${c.uniqueOpens}, machine ${c.machineOpens})  clicks ${c.clicks} (unique ${c.uniqueClicks})  ` +
      `unsubscribes ${c.unsubscribes}  complaints ${c.complaints}`,
    `skipped    suppressed ${c.skipped.suppressed}  unsubscribed ${c.skipped.unsubscribed}  bounced ${c.skipped.bounced}  ` +
      `complained ${c.skipped.complained}  duplicate ${c.skipped.duplicate}`,
    `rates      delivery ${pct(r.rates.delivery)}  open ${pct(r.rates.open)}  click ${pct(r.rates.click)}  bounce ${pct(r.rates.bounce)}  ` +
      `complaint ${pct(r.rates.complaint)}  unsubscribe ${pct(r.rates.unsubscribe)}`,
    ...(r.topLinks.length ? ['top links', ...r.topLinks.map((l) => `  ${l.clicks} (${l.uniqueClicks} unique)  ${l.url}`)] : []),
  ].join('\n');
}

const FINAL: CampaignStatus[] = ['sent', 'cancelled'];

/** --watch: a live progress bar (a line per change without a terminal) until the campaign is sent or cancelled. */
async function watch(pool: Pool, id: string, intervalMs = 1000): Promise<CampaignReport> {
  const tty = process.stdout.isTTY;
  const bar = tty
    ? new cliProgress.SingleBar(
        { format: 'sending [{bar}] {percentage}% | {done}/{total} | delivered {delivered} bounced {bounced} | {status} | ETA {eta}s' },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let last = '';
  let r = await reportOf(pool, id);
  bar?.start(Math.max(1, r.progress.recipients), 0, {});
  for (;;) {
    const done = r.progress.recipients - r.progress.remaining;
    const fields = {
      done,
      total: r.progress.recipients,
      delivered: r.counts.delivered,
      bounced: r.counts.hardBounced + r.counts.softBounced,
      status: r.status + (r.pauseReason ? ` (${r.pauseReason})` : ''),
      eta: r.progress.etaSeconds ?? '-',
    };
    if (bar) {
      bar.setTotal(Math.max(1, r.progress.recipients));
      bar.update(done, fields);
    } else {
      const line = `progress ${r.progress.percent}% ${done}/${r.progress.recipients} delivered ${fields.delivered} bounced ${fields.bounced} ${fields.status}`;
      if (line !== last) process.stdout.write(line + '\n');
      last = line;
    }
    if (FINAL.includes(r.status)) break;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    r = await reportOf(pool, id);
  }
  bar?.stop();
  return r;
}

function stateCommand(campaigns: Command, name: string, description: string, run: (pool: Pool, accountId: string, id: string) => Promise<{ id: string; status: string }>) {
  campaigns
    .command(`${name} <campaignId>`)
    .description(description)
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const r = await withDatabase(async ({ pool }) => {
        const accountId = await accountOfCampaign(pool, id);
        const changed = await run(pool, accountId, id);
        notifySoon(pool, 'postline_campaigns');
        return { id: changed.id, status: changed.status };
      });
      output(o.json, r, () => `${r.id} ${r.status}`);
    });
}

export function registerCampaignCommands(program: Command): void {
  const campaigns = program.command('campaigns').description('Campaigns: create, send, pause, resume, cancel, report (docs/campaigns.md)');
  campaigns
    .command('create')
    .description('Create a campaign draft')
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--name <name>', 'campaign name')
    .requiredOption('--from <email>', 'sender address (on a verified domain)')
    .option('--from-name <name>', 'sender display name')
    .option('--subject <subject>', 'subject (template language)')
    .option('--html-file <file>', 'HTML body from a file')
    .option('--text-file <file>', 'text body from a file')
    .option('--template <id>', 'template id')
    .requiredOption('--list <id>', 'audience list (repeat for several)', collect)
    .option('--exclude-list <id>', 'list to leave out (repeatable)', collect)
    .option('--segment <id>', 'segment narrowing the audience')
    .option('--tag <tag>', 'tag (repeatable)', collect)
    .option('--throttle <n>', 'messages per minute', (v) => Number(v))
    .option('--scheduled-at <iso>', 'start time once sent')
    .option('--json', 'print JSON')
    .action(async (o: {
      account: string; name: string; from: string; fromName?: string; subject?: string; htmlFile?: string; textFile?: string; template?: string;
      list: string[]; excludeList?: string[]; segment?: string; tag?: string[]; throttle?: number; scheduledAt?: string; json?: boolean;
    }) => {
      const input: CampaignInput = {
        name: o.name,
        ...(o.subject !== undefined ? { subject: o.subject } : {}),
        from: { email: o.from, ...(o.fromName ? { name: o.fromName } : {}) },
        ...(o.htmlFile ? { html: readFileSync(o.htmlFile, 'utf8') } : {}),
        ...(o.textFile ? { text: readFileSync(o.textFile, 'utf8') } : {}),
        ...(o.template ? { templateId: o.template } : {}),
        audience: { lists: o.list, ...(o.segment ? { segment: o.segment } : {}), excludeLists: o.excludeList ?? [] },
        ...(o.tag ? { tags: o.tag } : {}),
        ...(o.throttle !== undefined ? { throttle: o.throttle } : {}),
        ...(o.scheduledAt ? { scheduledAt: o.scheduledAt } : {}),
      };
      const c = await withDatabase(async ({ pool }) => {
        await requireAccount(pool, o.account);
        return withTransaction(pool, (tx) => createCampaign(tx, o.account, input, new Date()));
      });
      output(o.json, c, () => `created draft ${c.id} (${c.name}); send it with: postline campaigns send ${c.id}`);
    });
  campaigns
    .command('list')
    .description("List an account's campaigns, newest first")
    .requiredOption('--account <id>', 'account id')
    .option('--status <status>', 'draft, scheduled, sending, paused, sent or cancelled')
    .option('--json', 'print JSON')
    .action(async (o: { account: string; status?: CampaignStatus; json?: boolean }) => {
      const rows = await withDatabase(async ({ pool }) => {
        await requireAccount(pool, o.account);
        return (await listCampaigns(pool, o.account, o.status ?? null, { limit: 500, order: 'desc', afterId: null })).slice(0, 500).map(toDefinition);
      });
      output(o.json, rows, () => table(rows.map((c) => ({ ...c, scheduledAt: c.scheduledAt ?? '' })), ['id', 'name', 'status', 'scheduledAt', 'createdAt']));
    });
  stateCommand(campaigns, 'send', 'Queue a draft for sending (a running worker fans it out)', (pool, a, id) =>
    withTransaction(pool, (tx) => sendCampaign(tx, a, id, new Date())));
  stateCommand(campaigns, 'pause', 'Pause a sending campaign', (pool, a, id) => withTransaction(pool, (tx) => pauseCampaign(tx, a, id, new Date())));
  stateCommand(campaigns, 'resume', 'Resume a paused campaign', (pool, a, id) => withTransaction(pool, (tx) => resumeCampaign(tx, a, id, new Date())));
  stateCommand(campaigns, 'cancel', 'Cancel a campaign; unsent messages are removed', (pool, a, id) => withTransaction(pool, (tx) => cancelCampaign(tx, a, id, new Date())));
  campaigns
    .command('report <campaignId>')
    .description('Print the campaign report; --watch shows a live progress bar until it is sent')
    .option('--watch', 'follow progress until the campaign is sent or cancelled')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { watch?: boolean; json?: boolean }) => {
      const r = await withDatabase(({ pool }) => (o.watch ? watch(pool, id) : reportOf(pool, id)));
      output(o.json, r, () => describe(r));
    });
}
