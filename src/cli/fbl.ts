import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { output } from './context.js';

/**
 * `postline fbl-secret`: the key for POST /api/fbl/inbound (POSTLINE_FBL_SECRET, else the one
 * generated into the data dir on first use). Needs no database. Prints the bare key, so
 * `curl -H "X-FBL-Key: $(postline fbl-secret)"` works.
 */
export function registerFblCommands(program: Command): void {
  program
    .command('fbl-secret')
    .description('Print the key for the complaint intake, POST /api/fbl/inbound (X-FBL-Key header or ?key=)')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => {
      const config = loadConfig();
      output(o.json, { fblSecret: config.fblSecret, url: `${config.baseUrl}/api/fbl/inbound` }, () => config.fblSecret);
    });
}
