/**
 * TLS reporting (RFC 8460) as the platform keeps it: every SMTP session judged against a
 * recipient domain's MTA-STS policy is counted per domain and UTC day, and a day's counts
 * become the report that domain asked for (docs/sending-identity.md#tls-reports).
 */
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/pool.js';
import { addTlsSessions, tlsSessionsOf, type TlsSessionCount } from '../db/queries/tls-reports.js';
import { buildTlsReport, type TlsReport, type TlsSessionResult } from '../mail/tls-rpt/report.js';
import { AppError } from '../errors.js';

/** A session's TLS outcome (mail/tls-rpt/report.ts) for a recipient domain at a time. */
export interface TlsSession extends TlsSessionResult {
  domain: string;
  at: Date;
}

const utcDay = (d: Date) => d.toISOString().slice(0, 10);

/** A session as the row it adds to: successes are counted without host details. */
export function sessionCount(s: TlsSession): TlsSessionCount {
  const text = s.policy.type === 'sts' ? s.policy.text : '';
  const failure = s.result !== 'success';
  return {
    domain: s.domain,
    day: utcDay(s.at),
    policyType: s.policy.type,
    policyHash: createHash('sha256').update(text).digest('hex'),
    policyText: text,
    resultType: s.result,
    receivingMx: failure ? (s.receivingMx ?? '') : '',
    receivingIp: failure ? (s.receivingIp ?? '') : '',
    sendingIp: failure ? (s.sendingIp ?? '') : '',
    sessions: 1,
  };
}

export async function recordTlsSessions(db: Queryable, sessions: TlsSession[]): Promise<void> {
  await addTlsSessions(db, sessions.map(sessionCount));
}

/** `YYYY-MM-DD` naming a real calendar day, or a validation error. */
export function parseReportDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(d.getTime()) || utcDay(d) !== day) {
    throw new AppError('validation_failed', `day must be a calendar day as YYYY-MM-DD, got "${day}"`);
  }
  return day;
}

/** A recipient domain as reports name it: lower case, no trailing dot, a host name. */
export function parseReportDomain(domain: string): string {
  const d = domain.trim().toLowerCase().replace(/\.$/, '');
  if (d.length > 253 || !/^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/.test(d)) {
    throw new AppError('validation_failed', `"${domain}" is not a domain name`);
  }
  return d;
}

/** The day before `now`'s UTC day: the default report day (a report covers a finished day). */
export function previousUtcDay(now: Date): string {
  return utcDay(new Date(now.getTime() - 86_400_000));
}

export async function tlsReportFor(
  db: Queryable,
  reporter: { organization: string; contact: string; host: string },
  domain: string,
  day: string,
): Promise<TlsReport> {
  const counts = await tlsSessionsOf(db, domain, day);
  return buildTlsReport({ organization: reporter.organization, contact: reporter.contact, reporterHost: reporter.host, domain, day, counts });
}
