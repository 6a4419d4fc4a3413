import type { Command } from 'commander';
import { parseReportDay, parseReportDomain, previousUtcDay, tlsReportFor } from '../domain/tls-reports.js';
import { output, withDatabase } from './context.js';
import { sendTlsReport } from '../delivery/tls-reports/send.js';
import { tlsReportDeps } from '../delivery/tls-reports/deps.js';
import { systemClock } from '../clock.js';

export function registerTlsReportCommands(program: Command): void {
  program
    .command('tls-report <domain>')
    .description("Print the TLS report (RFC 8460) of a recipient domain for one UTC day: the MTA-STS policy applied to its MX hosts, successful sessions and failures")
    .option('--day <YYYY-MM-DD>', 'the UTC day (default: yesterday)')
    .option('--json', 'print the RFC 8460 JSON document')
    .option('--send', "send it to the domain's rua (its _smtp._tls TXT record: https and mailto addresses) and print what happened")
    .action(async (domainArg: string, o: { day?: string; json?: boolean; send?: boolean }) => {
      const domain = parseReportDomain(domainArg);
      const day = o.day === undefined ? previousUtcDay(new Date()) : parseReportDay(o.day);
      if (o.send) {
        const delivery = await withDatabase(async ({ config, pool }) => {
          const deps = tlsReportDeps({ config, pool, clock: systemClock });
          try {
            return await sendTlsReport(deps, domain, day);
          } finally {
            await deps.mail.mailer.close();
          }
        });
        output(o.json, delivery, () => delivery.skipped ?? delivery.results.map((r) => `${r.uri}: ${r.delivered ? 'delivered' : r.retry ? 'not delivered, worth trying again' : 'not delivered'} (${r.detail})`).join('\n'));
        return;
      }
      const report = await withDatabase(({ config, pool }) =>
        tlsReportFor(pool, { ...config.tlsReports, host: new URL(config.baseUrl).hostname }, domain, day),
      );
      output(o.json, report, () => {
        if (report.policies.length === 0) return `${domain} ${day}: no TLS sessions recorded`;
        return report.policies.map((p) => {
          const s = p.summary;
          const head = `${domain} ${day} policy ${p.policy['policy-type']}${p.policy['mx-host'] ? ` (mx: ${p.policy['mx-host'].join(', ')})` : ''}: ` +
            `${s['total-successful-session-count']} successful, ${s['total-failure-session-count']} failed`;
          const details = (p['failure-details'] ?? []).map((f) => `  ${f['failed-session-count']} × ${f['result-type']}${f['receiving-mx-hostname'] ? ` at ${f['receiving-mx-hostname']}` : ''}`);
          return [head, ...details].join('\n');
        }).join('\n');
      });
    });
}
