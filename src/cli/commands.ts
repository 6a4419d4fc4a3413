import type { Command } from 'commander';
import { registerAccountCommands } from './accounts.js';
import { registerMailboxCommands } from './mailbox.js';
import { registerFblCommands } from './fbl.js';
import { registerBounceCommands } from './bounces.js';
import { registerSubscriberCommands } from './subscribers.js';
import { registerDomainCommands } from './domains.js';
import { registerHookCommands } from './hooks.js';
import { registerCampaignCommands } from './campaigns.js';
import { registerAutomationCommands } from './automations.js';
import { registerUserCommands } from './users.js';
import { registerTlsReportCommands } from './tls-report.js';
import { registerDeliveryCommands } from './delivery.js';

/**
 * The administrative commands (accounts, keys, campaigns, subscribers…). Each group imports
 * the domain modules it acts on, and with them mail parsing, CSV, progress bars and password
 * hashing: ~0.4 s of CPU that `postline start` never needs, so the CLI loads this module for
 * every other command line only (src/bin/postline.ts).
 */
export function registerAdminCommands(program: Command): void {
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
}
