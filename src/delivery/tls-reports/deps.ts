import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/pool.js';
import { createMailDns } from '../../mail/dns.js';
import { createReportMailer } from '../report-mailer.js';
import type { TlsReportSendDeps } from './send.js';

/**
 * What sending TLS reports needs, from the configuration: the mail resolver, who we are, the
 * webhooks' private-address rule for https rua, and a mailer with the From and key store for
 * mailto rua. Close `mail.mailer` when done.
 */
export function tlsReportDeps(deps: { config: Config; pool: Queryable; clock: Clock; log?: Logger }): TlsReportSendDeps {
  const { config, log } = deps;
  const dns = createMailDns({ servers: config.dnsServers, clock: deps.clock });
  return {
    db: deps.pool,
    dns,
    reporter: { organization: config.tlsReports.organization, contact: config.tlsReports.contact, host: new URL(config.baseUrl).hostname },
    allowPrivate: config.webhookAllowPrivate,
    mail: { from: config.tlsReports.from, secret: config.secret, mailer: createReportMailer(config, dns) },
    now: () => deps.clock.now(),
    onUndelivered: log && ((d, r) => log.warn({ domain: d.domain, day: d.day, rua: r.uri, detail: r.detail, retry: r.retry ?? false }, 'TLS report not delivered')),
  };
}
