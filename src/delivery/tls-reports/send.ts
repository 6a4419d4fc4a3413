/**
 * Sending TLS reports (RFC 8460 §5) to the domains that ask for them with a
 * `_smtp._tls.<domain>` TXT record, once a UTC day is over, when POSTLINE_TLSRPT_SEND=true.
 * https addresses get the gzipped report POSTed as application/tlsrpt+gzip (§5.4), through
 * the same guard as webhooks (no private addresses unless allowed, no redirects, a time
 * limit). mailto addresses are not sent to: the report would need a sender domain of the
 * deployment to DKIM-sign it (§5.3), which Postline does not have; they are recorded as skipped.
 */
import { gzipSync } from 'node:zlib';
import type { Queryable } from '../../db/pool.js';
import { claimTlsReportSend, recordTlsReportSend, tlsReportDomainsOn } from '../../db/queries/tls-reports.js';
import { DnsTempError, type MailDns } from '../../mail/dns.js';
import { parseTlsRptRecord } from '../../mail/tls-rpt/record.js';
import { guardedPost } from '../../domain/webhooks/ssrf.js';
import { previousUtcDay, tlsReportFor } from '../../domain/tls-reports.js';

export interface TlsReportSendDeps {
  db: Queryable;
  dns: Pick<MailDns, 'resolveTxt' | 'resolveHostAddresses'>;
  reporter: { organization: string; contact: string; host: string };
  /** POSTLINE_WEBHOOK_ALLOW_PRIVATE: tests and development may post to loopback. */
  allowPrivate: boolean;
  timeoutMs?: number;
}

export interface TlsReportDelivery {
  domain: string;
  day: string;
  /** Why nothing was sent, when nothing was. */
  skipped?: string;
  results: { uri: string; delivered: boolean; detail: string }[];
}

export async function sendTlsReport(deps: TlsReportSendDeps, domain: string, day: string): Promise<TlsReportDelivery> {
  let txt: string[] | null;
  try {
    txt = await deps.dns.resolveTxt(`_smtp._tls.${domain}`);
  } catch (err) {
    if (err instanceof DnsTempError) return { domain, day, skipped: err.message, results: [] };
    throw err;
  }
  const record = parseTlsRptRecord(txt ?? []);
  if (!record.ok) return { domain, day, skipped: `_smtp._tls.${domain}: ${record.error}`, results: [] };
  const report = await tlsReportFor(deps.db, deps.reporter, domain, day);
  if (report.policies.length === 0) return { domain, day, skipped: 'no TLS sessions that day', results: [] };
  const body = gzipSync(JSON.stringify(report));
  const results: TlsReportDelivery['results'] = [];
  for (const uri of record.value.rua) {
    if (uri.toLowerCase().startsWith('mailto:')) {
      results.push({ uri, delivered: false, detail: 'mailto reports are not sent (no deployment domain to DKIM-sign them); use an https rua' });
      continue;
    }
    const posted = await guardedPost(new URL(uri), body, { 'content-type': 'application/tlsrpt+gzip' }, {
      allowPrivate: deps.allowPrivate,
      timeoutMs: deps.timeoutMs ?? 30_000,
      resolve: async (host) => (await deps.dns.resolveHostAddresses(host)).addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    });
    const delivered = posted.kind === 'response' && posted.status >= 200 && posted.status < 300;
    results.push({ uri, delivered, detail: posted.kind === 'response' ? `HTTP ${posted.status}` : posted.error });
  }
  return { domain, day, results };
}

/** Yesterday's reports not yet sent by any worker: each claimed, sent, and its outcome kept. */
export async function sendDueTlsReports(deps: TlsReportSendDeps, now: Date): Promise<TlsReportDelivery[]> {
  const day = previousUtcDay(now);
  const sent: TlsReportDelivery[] = [];
  for (const domain of await tlsReportDomainsOn(deps.db, day)) {
    if (!(await claimTlsReportSend(deps.db, domain, day, now))) continue;
    const delivery = await sendTlsReport(deps, domain, day);
    await recordTlsReportSend(deps.db, domain, day, delivery);
    sent.push(delivery);
  }
  return sent;
}
