/**
 * Delivers mail the deployment itself sends (TLS reports to a `mailto:` rua) the way
 * delivery sends any message: the recipient domain's MX hosts in preference order (or the
 * relay with POSTLINE_DELIVERY=relay), from the first source of the `transactional` pool
 * when the policy has sources, greeting with the base URL's host. One message at a time, so
 * traffic shaping's gates and warm-up caps are not involved.
 *
 * TLS is opportunistic even when the recipient domain enforces MTA-STS: RFC 8460 §5.3 wants
 * reports delivered despite TLS failures (a report is how a domain learns its TLS is broken),
 * and such a session is not counted in the next report (docs/decisions/0036-tls-report-mail.md).
 */
import type { Config } from '../config.js';
import type { MailDns } from '../mail/dns.js';
import { SmtpSender } from '../mail/smtp.js';
import type { DeliveryResult } from '../mail/classify.js';
import { deliverWithSts } from '../mail/mta-sts/deliver.js';

export interface ReportMailResult {
  delivered: boolean;
  /** The receiver's reply or why nothing was handed over. */
  detail: string;
  /** A temporary failure: worth trying again later. */
  retry: boolean;
}

export interface ReportMailer {
  send(envelope: { from: string; to: string }, raw: Buffer): Promise<ReportMailResult>;
  close(): Promise<void>;
}

type MailerConfig = Pick<Config, 'delivery' | 'smtpRelay' | 'mxPort' | 'baseUrl' | 'deliveryPolicy'>;

export function createReportMailer(config: MailerConfig, dns: Pick<MailDns, 'resolveMx'>): ReportMailer {
  const sender = new SmtpSender({ heloName: new URL(config.baseUrl).hostname, maxConnectionsPerHost: 1, idleTimeoutMs: 5_000 });
  const { identity } = config.deliveryPolicy;
  const sourceName = identity.pools.transactional?.[0];
  const source = identity.sources.find((s) => s.name === sourceName);
  return {
    async send(envelope, raw) {
      if (config.delivery === 'capture') return { delivered: false, detail: 'POSTLINE_DELIVERY=capture: mail leaves nowhere', retry: false };
      if (config.delivery === 'relay') return resultOf(await sender.send({ kind: 'relay', url: config.smtpRelay! }, envelope, raw));
      const domain = envelope.to.slice(envelope.to.lastIndexOf('@') + 1).toLowerCase();
      const lookup = await dns.resolveMx(domain);
      if (!lookup.ok) return { delivered: false, detail: `${domain}: ${lookup.message}`, retry: lookup.kind === 'temp' };
      const { result } = await deliverWithSts({
        domain,
        hosts: lookup.hosts,
        port: config.mxPort,
        source: source ? { address: source.address, ehlo: source.ehlo } : undefined,
        lookup: null,
        send: (target) => sender.send(target, envelope, raw),
      });
      return resultOf(result);
    },
    close: () => sender.close(),
  };
}

function resultOf(r: DeliveryResult): ReportMailResult {
  const where = r.mx ? `${r.mx}: ` : '';
  return { delivered: r.kind === 'delivered', detail: `${where}${r.response}`, retry: r.kind === 'deferred' };
}
