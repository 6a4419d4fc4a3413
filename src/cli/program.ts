/**
 * The `postline` command line: `start` runs the service; the administrative commands are
 * registered only for other command lines (below).
 */
import { Command, Option } from 'commander';
import { reportCliError, withDatabase, output } from './context.js';
import { loadConfig, type Role } from '../config.js';

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
    const { bootstrapDefaultAccount } = await import('../bootstrap.js');
    const banner = await withDatabase(({ pool, config }) => bootstrapDefaultAccount(pool, config));
    const already = 'already initialised: accounts exist. New keys: postline keys create --account <id>; dashboard access: postline users reset-password --email <email>';
    output(o.json, { created: banner !== null, text: banner ?? already }, () => banner ?? already);
  });

// `postline start` is the only command the service runs by: it loads the modules of the role it
// starts and nothing else, so a worker's start-up CPU is not spent compiling the administrative
// commands (cli/commands.ts). Any other command line (or none, or `help`) gets the whole tree.
// The command is the first argument: the program itself takes no options besides --help.
if (process.argv[2] !== 'start') (await import('./commands.js')).registerAdminCommands(program);

program.parseAsync(process.argv).catch(reportCliError);
