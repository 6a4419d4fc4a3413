import type { Command } from 'commander';
import { accountOfHook, enableHook } from '../domain/webhooks/hooks.js';
import { output, withDatabase } from './context.js';

/** `postline hooks enable HOOK_ID`: the operator's way to revive a disabled webhook (also POST /api/v1/hooks/{id}/enable). */
export function registerHookCommands(program: Command): void {
  const hooks = program.command('hooks').description('Manage webhooks');
  hooks
    .command('enable <hookId>')
    .description('Re-enable a disabled webhook: active again, pending batch sent first')
    .option('--json', 'print JSON')
    .action(async (hookId: string, o: { json?: boolean }) => {
      const hook = await withDatabase(async ({ pool }) => enableHook(pool, await accountOfHook(pool, hookId), hookId, new Date()));
      output(o.json, hook, () => `${hook.id}  ${hook.url}  ${hook.status}`);
    });
}
