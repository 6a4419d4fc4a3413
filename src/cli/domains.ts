import type { Command } from 'commander';
import { requireAccount } from '../domain/accounts.js';
import {
  accountOfDomain, createDomain, dnsTargetsOf, domainsOfAccount, forceVerifyDomain, getDomain, verifyDomain, type Domain,
} from '../domain/domains/domains.js';
import { createMailDns } from '../mail/dns.js';
import { output, table, withDatabase } from './context.js';

function recordsTable(domain: Domain): string {
  const rows = domain.records.map((r) => ({
    purpose: r.purpose + (r.required ? ' (required)' : ''),
    type: r.type,
    name: r.name,
    value: r.priority !== undefined ? `${r.priority} ${r.value}` : r.value,
    status: r.status,
  }));
  return table(rows, ['purpose', 'type', 'name', 'status', 'value']);
}

function describe(domain: Domain): string {
  const head = `${domain.id}  ${domain.name}  ${domain.status}${domain.verifiedAt ? ` (since ${domain.verifiedAt})` : ''}  tracking: ${domain.tracking.status}`;
  const problems = domain.records.filter((r) => r.detail && r.status !== 'verified').map((r) => `  ${r.purpose}: ${r.detail}`);
  return [head, '', recordsTable(domain), ...(problems.length ? ['', ...problems] : [])].join('\n');
}

export function registerDomainCommands(program: Command): void {
  const domains = program.command('domains').description('Manage sender domains (DKIM, SPF, return path, tracking CNAME)');
  domains
    .command('add <name>')
    .description('Add a sender domain to an account and print the DNS records to publish')
    .requiredOption('--account <id>', 'account id')
    .option('--json', 'print JSON')
    .action(async (name: string, o: { account: string; json?: boolean }) => {
      const domain = await withDatabase(async ({ pool, config }) => {
        await requireAccount(pool, o.account);
        return createDomain(pool, { accountId: o.account, name, now: new Date() }, { secret: config.secret, targets: dnsTargetsOf(config) });
      });
      output(o.json, domain, () => `added ${domain.name} as ${domain.id}; publish these records, then run: postline domains verify ${domain.id}\n\n${recordsTable(domain)}`);
    });
  domains
    .command('verify <domainId>')
    .description('Look the DNS records up and print their status; the domain is verified when its DKIM record matches')
    .option('--force', 'mark the domain verified WITHOUT checking DNS (evaluation only: receivers will fail DKIM until the records exist)')
    .option('--json', 'print JSON')
    .action(async (domainId: string, o: { force?: boolean; json?: boolean }) => {
      const domain = await withDatabase(async ({ pool, config }) => {
        const targets = dnsTargetsOf(config);
        const accountId = await accountOfDomain(pool, domainId);
        if (!o.force) return verifyDomain(pool, accountId, domainId, { dns: createMailDns({ servers: config.dnsServers }), targets, now: new Date() });
        await forceVerifyDomain(pool, domainId, new Date());
        const forced = await getDomain(pool, accountId, domainId, targets);
        process.stderr.write(
          `WARNING: domain ${forced.name} (${forced.id}) was marked VERIFIED WITHOUT CHECKING DNS (--force).\n` +
          'WARNING: its mail is signed with DKIM keys no receiver can find until the records are published; expect spam folders and rejections.\n',
        );
        return forced;
      });
      output(o.json, domain, () => describe(domain));
    });
  domains
    .command('list')
    .description("List an account's sender domains")
    .requiredOption('--account <id>', 'account id')
    .option('--json', 'print JSON')
    .action(async (o: { account: string; json?: boolean }) => {
      const list = await withDatabase(async ({ pool, config }) => {
        await requireAccount(pool, o.account);
        return domainsOfAccount(pool, o.account, dnsTargetsOf(config));
      });
      const rows = list.map((d) => ({ id: d.id, name: d.name, status: d.status, tracking: d.tracking.status, verifiedAt: d.verifiedAt, createdAt: d.createdAt }));
      output(o.json, list, () => table(rows, ['id', 'name', 'status', 'tracking', 'verifiedAt', 'createdAt']));
    });
}
