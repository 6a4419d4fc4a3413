/**
 * The mail that carries a TLS report to a `mailto:` rua (RFC 8460 §5.3): a
 * `multipart/report; report-type="tlsrpt"` message with a short human-readable part and the
 * gzipped JSON report as an `application/tlsrpt+gzip` attachment named
 * `submitter!policy-domain!begin-timestamp!end-timestamp!unique-id.json.gz`, the
 * `TLS-Report-Domain` and `TLS-Report-Submitter` headers, and the subject the RFC spells out.
 * Built with nodemailer's MailComposer; signing and delivery are the caller's.
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import type { TlsReport } from './report.js';

export interface TlsReportMailInput {
  report: TlsReport;
  /** The report, gzipped (the same bytes an https rua receives). */
  gzipped: Buffer;
  /** The policy domain the report is about. */
  domain: string;
  /** Our host name: the submitter (§5.3, "the domain of the Sending MTA"). */
  submitter: string;
  from: string;
  to: string;
  date: Date;
}

/** The headers the DKIM signature must cover besides the usual ones. */
export const TLS_REPORT_HEADERS = ['TLS-Report-Domain', 'TLS-Report-Submitter'] as const;

/** §5.3: seconds since the epoch, for the attachment's name. */
const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

export function tlsReportFilename(report: TlsReport, domain: string, submitter: string): string {
  const range = report['date-range'];
  // §5.3's unique-id is letters and digits: the report id's day and domain, nothing else.
  const unique = report['report-id'].split('@')[0].replace(/[^A-Za-z0-9]/g, '');
  return `${submitter}!${domain}!${epochSeconds(range['start-datetime'])}!${epochSeconds(range['end-datetime'])}!${unique}.json.gz`;
}

export async function composeTlsReportMail(input: TlsReportMailInput): Promise<Buffer> {
  const { report, domain, submitter } = input;
  const failed = report.policies.reduce((n, p) => n + p.summary['total-failure-session-count'], 0);
  const succeeded = report.policies.reduce((n, p) => n + p.summary['total-successful-session-count'], 0);
  const range = report['date-range'];
  const text = [
    `This is an SMTP TLS report (RFC 8460) for ${domain} from ${report['organization-name']}.`,
    '',
    `Period: ${range['start-datetime']} to ${range['end-datetime']}`,
    `Sessions: ${succeeded} successful, ${failed} failed`,
    `Report-ID: ${report['report-id']}`,
    '',
    'The report itself is the attached application/tlsrpt+gzip file.',
    `Questions about this report: ${report['contact-info']}`,
    '',
  ].join('\r\n');
  const composer = new MailComposer({
    from: input.from,
    to: input.to,
    subject: `Report Domain: ${domain} Submitter: ${submitter} Report-ID: <${report['report-id']}>`,
    date: input.date,
    messageId: `<tlsrpt.${report['report-id']}>`,
    headers: { 'TLS-Report-Domain': domain, 'TLS-Report-Submitter': submitter },
    text,
    attachments: [{
      filename: tlsReportFilename(report, domain, submitter),
      content: input.gzipped,
      contentType: 'application/tlsrpt+gzip',
      contentDisposition: 'attachment',
      encoding: 'base64',
    }],
    disableFileAccess: true,
    disableUrlAccess: true,
    newline: 'win',
  });
  const root = composer.compile();
  // MailComposer writes multipart/mixed; §5.3 wants multipart/report with the report type.
  root.setHeader('Content-Type', 'multipart/report; report-type="tlsrpt"');
  return root.build();
}
