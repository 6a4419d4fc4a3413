import type { Command } from 'commander';
import { withTransaction, type Pool } from '../db/pool.js';
import { requireAccount } from '../domain/accounts.js';
import { accountOfAutomation, listAutomations } from '../domain/automations/automations.js';
import { listRuns } from '../domain/automations/runs.js';
import { triggerEvent } from '../domain/automations/trigger.js';
import type { RunStatus } from '../db/queries/automations/runs.js';
import { AppError } from '../errors.js';
import { output, table, withDatabase } from './context.js';
import { defaultAccount } from './users.js';

const RUN_STATUSES = ['active', 'waiting', 'completed', 'exited', 'failed'];

function parseData(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new AppError('validation_failed', `--data is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new AppError('validation_failed', '--data must be a JSON object');
  return data as Record<string, unknown>;
}

/** The account named by --account, or the only one (a single-account install names none, as the issue's `postline automations list`). */
async function accountFrom(pool: Pool, account: string | undefined): Promise<string> {
  if (account === undefined) return defaultAccount(pool);
  await requireAccount(pool, account);
  return account;
}

export function registerAutomationCommands(program: Command): void {
  const automations = program.command('automations').description('Event-driven automations: definitions, runs, triggering');
  automations
    .command('list')
    .description("List an account's automations with their run counters")
    .option('--account <id>', 'account id (default: the only account)')
    .option('--json', 'print JSON')
    .action(async (o: { account?: string; json?: boolean }) => {
      const list = await withDatabase(async ({ pool }) => {
        const accountId = await accountFrom(pool, o.account);
        return listAutomations(pool, accountId, { limit: 500, order: 'asc', afterId: null });
      });
      output(o.json, list, () => table(list.map((a) => ({
        id: a.id, name: a.name, status: a.status, trigger: a.trigger.event,
        started: a.counters.runsStarted, 'in progress': a.counters.runsInProgress, completed: a.counters.runsCompleted,
        exited: a.counters.runsExited, failed: a.counters.runsFailed,
      })), ['id', 'name', 'status', 'trigger', 'started', 'in progress', 'completed', 'exited', 'failed']));
    });
  automations
    .command('runs <automationId>')
    .description("List an automation's runs, newest first")
    .option('--status <status>', `only runs with this status (${RUN_STATUSES.join(', ')})`)
    .option('--limit <n>', 'at most this many (1-500)', '50')
    .option('--json', 'print JSON')
    .action(async (automationId: string, o: { status?: string; limit: string; json?: boolean }) => {
      if (o.status !== undefined && !RUN_STATUSES.includes(o.status)) throw new AppError('validation_failed', `--status must be one of ${RUN_STATUSES.join(', ')}`);
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new AppError('validation_failed', '--limit must be a whole number from 1 to 500');
      const runs = await withDatabase(async ({ pool }) => {
        const accountId = await accountOfAutomation(pool, automationId);
        return (await listRuns(pool, accountId, automationId, o.status as RunStatus | undefined, { limit, order: 'desc', afterId: null })).slice(0, limit);
      });
      output(o.json, runs, () => table(runs.map((r) => ({
        id: r.id, email: r.email, status: r.status, position: r.position, 'waiting for': r.waitingFor, 'wakes at': r.wakesAt,
        started: r.startedAt, 'exit reason': r.exitReason,
      })), ['id', 'email', 'status', 'position', 'waiting for', 'wakes at', 'started', 'exit reason']));
    });
  automations
    .command('trigger <event> <email>')
    .description('Trigger an event for an address: starts matching automations and wakes runs waiting for it')
    .option('--account <id>', 'account id (default: the only account)')
    .option('--data <json>', 'event data, a JSON object')
    .option('--json', 'print JSON')
    .action(async (event: string, email: string, o: { account?: string; data?: string; json?: boolean }) => {
      const data = parseData(o.data);
      const result = await withDatabase(async ({ pool }) => {
        const accountId = await accountFrom(pool, o.account);
        return withTransaction(pool, (tx) => triggerEvent(tx, accountId, { event, email, ...(data ? { data } : {}) }, new Date()));
      });
      output(o.json, result, () => [
        `${event} for ${email}: started ${result.runs.length} run(s), resumed ${result.resumed} waiting run(s)`,
        ...result.runs.map((r) => `  ${r.id}  (automation ${r.automationId})`),
      ].join('\n'));
    });
}
