/**
 * A TLS report to a `mailto:` rua (RFC 8460 §5.3): composed as the RFC describes
 * (mail/tls-rpt/report-mail.ts), DKIM-signed with the keys of the verified sender domain of
 * POSTLINE_TLSRPT_FROM (the RFC requires the signature; docs/decisions/0036-tls-report-mail.md),
 * and handed to the report mailer. Never throws for a delivery or configuration failure: the
 * result says what happened and whether a later try may do better.
 */
import type { Queryable } from '../../db/pool.js';
import { selectVerifiedDomainIdByName } from '../../db/queries/domains.js';
import { loadSigningKeys } from '../../domain/domains/domains.js';
import { signMessage } from '../../mail/dkim.js';
import { composeTlsReportMail, TLS_REPORT_HEADERS } from '../../mail/tls-rpt/report-mail.js';
import type { TlsReport } from '../../mail/tls-rpt/report.js';
import type { ReportMailer, ReportMailResult } from '../report-mailer.js';

export interface MailtoReportDeps {
  db: Queryable;
  mailer: ReportMailer;
  /** POSTLINE_TLSRPT_FROM; null: mailto reports are not sent. */
  from: string | null;
  /** POSTLINE_SECRET, which the DKIM keys are stored under. */
  secret: string;
  now: Date;
}

export async function mailTlsReport(deps: MailtoReportDeps, uri: string, report: { json: TlsReport; gzipped: Buffer; domain: string; submitter: string }): Promise<ReportMailResult> {
  if (!deps.from) return { delivered: false, detail: 'mailto reports need POSTLINE_TLSRPT_FROM (an address at a verified sender domain, whose DKIM keys sign them)', retry: false };
  const to = mailtoAddress(uri);
  if (!to) return { delivered: false, detail: `${uri} is not a mailto: address Postline can send to`, retry: false };
  const fromDomain = deps.from.slice(deps.from.lastIndexOf('@') + 1).toLowerCase();
  const domainId = await selectVerifiedDomainIdByName(deps.db, fromDomain);
  if (!domainId) return { delivered: false, detail: `POSTLINE_TLSRPT_FROM's domain ${fromDomain} is not a verified sender domain: add and verify it (postline domains add) so its DKIM keys can sign the reports`, retry: false };
  let raw: Buffer;
  try {
    const signing = await loadSigningKeys(deps.db, domainId, deps.secret);
    const composed = await composeTlsReportMail({
      report: report.json, gzipped: report.gzipped, domain: report.domain, submitter: report.submitter, from: deps.from, to, date: deps.now,
    });
    raw = await signMessage(composed, { domain: signing.domain, keys: signing.keys, signTime: deps.now, extraHeaders: TLS_REPORT_HEADERS });
  } catch (err) {
    // Our own failure (a key that no longer decrypts, the database): not sent, tried again later.
    return { delivered: false, detail: `could not sign the report with ${fromDomain}'s keys: ${(err as Error).message}`, retry: true };
  }
  return deps.mailer.send({ from: deps.from, to }, raw);
}

/**
 * The address of a `mailto:` URI (RFC 6068): percent-decoded, one address, no query (RFC 8460
 * reports go to the address alone), and nothing that could break a header or an SMTP command.
 */
export function mailtoAddress(uri: string): string | null {
  const rest = uri.slice('mailto:'.length).split('?')[0];
  let address: string;
  try {
    address = decodeURIComponent(rest).trim();
  } catch {
    return null;
  }
  return /^[^\s@<>,;:"\\()[\]]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]+$/.test(address) ? address : null;
}
