/**
 * The MTA that speaks in a bounce, and what its codes mean in its own dialect. Two questions:
 * which family *reported* the bounce (its wording, its layout: Postfix's "This is the mail
 * system at host", qmail's "qmail-send program"), and which family produced the diagnostic —
 * the remote MTA when there is one (a Postfix DSN quoting Office 365), else the reporter.
 * The second decides how a status code reads: Office 365 writes 5.1.10 and 5.4.1 for a
 * recipient its directory does not know, where RFC 3463 and RFC 7505 mean null MX and
 * "no answer from host". Tables are data, each entry with an example.
 */
import type { BounceReason } from './reasons.js';

export const MTA_FAMILIES = [
  'postfix', 'exim', 'sendmail', 'qmail', 'exchange', 'gmail', 'yahoo', 'opensmtpd', 'courier', 'amazonses', 'dragonfly',
] as const;
export type MtaFamily = (typeof MTA_FAMILIES)[number];

interface Fingerprint {
  family: MtaFamily;
  /** Tried on the bounce's From, Subject, header names, human-readable text and delivery-status fields. */
  re: RegExp;
  example: string;
}

/** Most specific first: a DragonFly or Courier report also has Sendmail-like sections. */
export const REPORTER_FINGERPRINTS: readonly Fingerprint[] = [
  { family: 'dragonfly', re: /DragonFly Mail Agent/i, example: 'This is the DragonFly Mail Agent v0.13 at mail.example.org.' },
  { family: 'courier', re: /running the Courier mail server|Courier mail server at/i, example: 'This is a delivery status notification from mail.example.org, running the Courier mail server.' },
  { family: 'opensmtpd', re: /This is the MAILER-DAEMON, please DO NOT REPLY|\(OpenSMTPD\)/i, example: 'This is the MAILER-DAEMON, please DO NOT REPLY to this email.' },
  { family: 'qmail', re: /qmail-send program/i, example: 'Hi. This is the qmail-send program at mail.example.org.' },
  { family: 'amazonses', re: /amazonses\.|x-ses-outgoing/i, example: 'Reporting-MTA: dns; a8-55.smtp-out.amazonses.com' },
  { family: 'exchange', re: /Diagnostic information for administrators|Generating server:|Delivery has failed to these recipients or groups|Your message did not reach some or all of the intended recipients|x-ms-exchange-|MicrosoftExchange|Microsoft Outlook|postmaster@(?:outlook|hotmail|live)\.|prod\.exchangelabs|\.prod\.outlook\./i, example: 'Diagnostic information for administrators:' },
  { family: 'gmail', re: /mailer-daemon@google(?:mail)?\.|^\*\* (?:Message not delivered|Address not found|Message blocked) \*\*$|Google tried to deliver|Google Groups/im, example: '** Address not found **' },
  { family: 'yahoo', re: /Sorry, we were unable to deliver your message to the following address|@yahoo/i, example: 'Sorry, we were unable to deliver your message to the following address.' },
  { family: 'sendmail', re: /The following addresses had permanent fatal errors|Transcript of session follows|Returned mail: see transcript/i, example: '   ----- The following addresses had permanent fatal errors -----' },
  { family: 'exim', re: /This message was created automatically by mail delivery software|^x-failed-recipients$/im, example: 'This message was created automatically by mail delivery software.' },
  { family: 'postfix', re: /This is the mail system at host|x-postfix-queue-id|X-Postfix;|\(Postfix\)/i, example: 'This is the mail system at host mx.example.org.' },
];

/** Remote hosts whose dialect is known by their name (the Remote-MTA of a DSN, our MX at delivery). */
export const HOST_FAMILIES: readonly Fingerprint[] = [
  { family: 'exchange', re: /\.(?:mail\.protection\.outlook\.com|outlook\.com|hotmail\.com|olc\.protection\.outlook\.com)$/i, example: 'contoso-com.mail.protection.outlook.com' },
  { family: 'gmail', re: /(?:^|\.)(?:google\.com|googlemail\.com|gmail-smtp-in\.l\.google\.com)$/i, example: 'gmail-smtp-in.l.google.com' },
  { family: 'yahoo', re: /\.(?:yahoodns\.net|yahoo\.com)$/i, example: 'mta7.am0.yahoodns.net' },
  { family: 'amazonses', re: /\.amazonses\.com$/i, example: 'inbound-smtp.us-east-1.amazonaws.amazonses.com' },
];

/** Status codes a family uses with its own meaning, over RFC 3463's. */
export const DIALECT_STATUS: Partial<Record<MtaFamily, Record<string, { reason: BounceReason; example: string }>>> = {
  exchange: {
    '5.1.10': { reason: 'user_unknown', example: '550 5.1.10 Recipient not found by SMTP address lookup' },
    '5.4.1': { reason: 'user_unknown', example: '550 5.4.1 Recipient address rejected: Access denied' },
  },
};

export function reporterFamily(evidence: string): MtaFamily | null {
  const text = evidence.length > 20_000 ? evidence.slice(0, 20_000) : evidence;
  return REPORTER_FINGERPRINTS.find((f) => f.re.test(text))?.family ?? null;
}

export function hostFamily(host: string | null | undefined): MtaFamily | null {
  const name = host?.trim().replace(/\.$/, '');
  return name ? (HOST_FAMILIES.find((f) => f.re.test(name))?.family ?? null) : null;
}

/** The dialect of a diagnostic: the remote MTA's when it is known, else the reporter's when no remote MTA took part. */
export function diagnosticDialect(remoteMta: string | null, reporter: MtaFamily | null): MtaFamily | null {
  return hostFamily(remoteMta) ?? (remoteMta ? null : reporter);
}

export function reasonFromDialectStatus(dialect: MtaFamily | null | undefined, status: string | null): BounceReason | null {
  return dialect && status ? (DIALECT_STATUS[dialect]?.[status]?.reason ?? null) : null;
}
