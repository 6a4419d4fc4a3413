/**
 * The aggregate TLS report of RFC 8460 §4: one JSON document per recipient domain and UTC day,
 * with each policy we applied to its MX hosts, how many sessions succeeded under it, and the
 * failures by result type and host. Pure: the counts come in, the document goes out.
 */
import { parseStsPolicy } from '../mta-sts/policy.js';
import type { CertificateFailure } from '../tls-failure.js';

/** RFC 8460 §4.3 result types we produce. */
export type TlsFailureType =
  | 'starttls-not-supported'
  | CertificateFailure
  | 'sts-policy-fetch-error'
  | 'sts-policy-invalid'
  | 'sts-webpki-invalid';

export type TlsResultType = 'success' | TlsFailureType | 'validation-failure';

/** One SMTP session (or policy fetch) judged against a recipient domain's MTA-STS policy. */
export interface TlsSessionResult {
  /** The policy it was judged against (its text; '' when it could not be fetched), or none. */
  policy: { type: 'sts'; text: string } | { type: 'no-policy-found' };
  result: TlsResultType;
  receivingMx?: string;
  receivingIp?: string;
  sendingIp?: string;
}

export interface TlsSessionCountInput {
  policyType: 'sts' | 'no-policy-found';
  policyText: string;
  policyHash: string;
  resultType: string;
  receivingMx: string;
  receivingIp: string;
  sendingIp: string;
  sessions: number;
}

export interface TlsReportPolicy {
  policy: {
    'policy-type': 'sts' | 'no-policy-found';
    'policy-string'?: string[];
    'policy-domain': string;
    'mx-host'?: string[];
  };
  summary: { 'total-successful-session-count': number; 'total-failure-session-count': number };
  'failure-details'?: {
    'result-type': string;
    'sending-mta-ip'?: string;
    'receiving-mx-hostname'?: string;
    'receiving-ip'?: string;
    'failed-session-count': number;
  }[];
}

export interface TlsReport {
  'organization-name': string;
  'date-range': { 'start-datetime': string; 'end-datetime': string };
  'contact-info': string;
  'report-id': string;
  policies: TlsReportPolicy[];
}

export interface TlsReportInput {
  organization: string;
  contact: string;
  /** Our host name: report ids are `<day>.<domain>@<host>`, the same each time a day is reported. */
  reporterHost: string;
  domain: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  counts: TlsSessionCountInput[];
}

export function buildTlsReport(input: TlsReportInput): TlsReport {
  const byPolicy = new Map<string, TlsSessionCountInput[]>();
  for (const c of input.counts) {
    const key = `${c.policyType}:${c.policyHash}`;
    if (!byPolicy.has(key)) byPolicy.set(key, []);
    byPolicy.get(key)!.push(c);
  }
  return {
    'organization-name': input.organization,
    'date-range': { 'start-datetime': `${input.day}T00:00:00Z`, 'end-datetime': `${input.day}T23:59:59Z` },
    'contact-info': input.contact,
    'report-id': `${input.day}.${input.domain}@${input.reporterHost}`,
    policies: [...byPolicy.values()].map((counts) => policyEntry(input.domain, counts)),
  };
}

function policyEntry(domain: string, counts: TlsSessionCountInput[]): TlsReportPolicy {
  const { policyType, policyText } = counts[0];
  const policy: TlsReportPolicy['policy'] = { 'policy-type': policyType, 'policy-domain': domain };
  if (policyType === 'sts') {
    // §4.4: the policy as fetched, one line per string; its mx patterns as mx-host.
    policy['policy-string'] = policyText.split(/\r?\n/).filter((l) => l.trim() !== '');
    const parsed = parseStsPolicy(policyText);
    if (parsed.ok) policy['mx-host'] = parsed.value.mx;
  }
  const successes = counts.filter((c) => c.resultType === 'success');
  const failures = counts.filter((c) => c.resultType !== 'success');
  const entry: TlsReportPolicy = {
    policy,
    summary: {
      'total-successful-session-count': sum(successes),
      'total-failure-session-count': sum(failures),
    },
  };
  if (failures.length > 0) {
    entry['failure-details'] = failures.map((f) => ({
      'result-type': f.resultType,
      ...(f.sendingIp ? { 'sending-mta-ip': f.sendingIp } : {}),
      ...(f.receivingMx ? { 'receiving-mx-hostname': f.receivingMx } : {}),
      ...(f.receivingIp ? { 'receiving-ip': f.receivingIp } : {}),
      'failed-session-count': f.sessions,
    }));
  }
  return entry;
}

const sum = (rows: { sessions: number }[]) => rows.reduce((n, r) => n + r.sessions, 0);
