#!/usr/bin/env node
import { Command, Option } from 'commander';
import { registerAccountCommands } from '../cli/accounts.js';
import { registerMailboxCommands } from '../cli/mailbox.js';
import { registerFblCommands } from '../cli/fbl.js';
import { registerBounceCommands } from '../cli/bounces.js';
import { reportCliError, withDatabase, output } from '../cli/context.js';
import { registerSubscriberCommands } from '../cli/subscribers.js';
import { registerDomainCommands } from '../cli/domains.js';
import { registerHookCommands } from '../cli/hooks.js';
import { registerCampaignCommands } from '../cli/campaigns.js';
import { registerAutomationCommands } from '../cli/automations.js';
import { registerUserCommands } from '../cli/users.js';
import { registerTlsReportCommands } from '../cli/tls-report.js';
import { registerDeliveryCommands } from '../cli/delivery.js';
import { loadConfig, type Role } from '../config.js';
import { bootstrapDefaultAccount } from '../bootstrap.js';

const program = new Command('postline').description('Postline: self-hosted email sending platform').showHelpAfterError();

program
  .command('start')
  .description('Run the service (API, workers, or both) on the configured database')
  .addOption(new Option('--role <role>', 'which part to run').choices(['all', 'api', 'worker']).default('all'))
  // Imported when run: the server loads only the modules of the role it starts (src/server.ts).
  .action(async (o: { role: Role }) => (await import('../server.js')).startServer(loadConfig(), o.role));

program
  .command('migrate')
  .description('Apply pending database migrations and exit')
  .option('--json', 'print JSON')
  .action(async (o: { json?: boolean }) => {
    await withDatabase(async () => {}); // opening the database migrates it
    output(o.json, { migrated: true }, () => 'database is up to date');
  });

program
  .command('init')
  .description('Create the first account, its API keys and the owner\'s sign-in link, and print them (once; for api and worker processes on a shared DATABASE_URL, which create nothing at start)')
  .option('--json', 'print JSON')
  .action(async (o: { json?: boolean }) => {
    const banner = await withDatabase(({ pool, config }) => bootstrapDefaultAccount(pool, config));
    const already = 'already initialised: accounts exist. New keys: postline keys create --account <id>; dashboard access: postline users reset-password --email <email>';
    output(o.json, { created: banner !== null, text: banner ?? already }, () => banner ?? already);
  });

registerAccountCommands(program);
registerMailboxCommands(program);
registerFblCommands(program);
registerBounceCommands(program);
registerDomainCommands(program);
registerSubscriberCommands(program);
registerHookCommands(program);
registerCampaignCommands(program);
registerAutomationCommands(program);
registerUserCommands(program);
registerTlsReportCommands(program);
registerDeliveryCommands(program);

program.parseAsync(process.argv).catch(reportCliError);
