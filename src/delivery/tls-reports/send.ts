/**
 * Sending TLS reports (RFC 8460 §5) to the domains that ask for them with a
 * `_smtp._tls.<domain>` TXT record, once a UTC day is over, when POSTLINE_TLSRPT_SEND=true.
 * https addresses get the gzipped report POSTed as application/tlsrpt+gzip (§5.4), through
 * the same guard as webhooks (no private addresses unless allowed, no redirects, a time
 * limit); mailto addresses get it as a DKIM-signed report mail (§5.3, ./mailto.ts). An
 * address that fails for a temporary reason is tried again later, alone (the others already
 * have the report), a few times over the following hours.
 */
import { gzipSync } from 'node:zlib';
import type { Queryable } from '../../db/pool.js';
import { claimTlsReportRetries, claimTlsReportSend, recordTlsReportSend, tlsReportDomainsOn } from '../../db/queries/tls-reports.js';
import { DnsTempError, type MailDns } from '../../mail/dns.js';
import { parseTlsRptRecord } from '../../mail/tls-rpt/record.js';
import { guardedPost } from '../../domain/webhooks/ssrf.js';
import { previousUtcDay, tlsReportFor } from '../../domain/tls-reports.js';
import type { ReportMailer } from '../report-mailer.js';
import { mailTlsReport } from './mailto.js';

export interface TlsReportSendDeps {
  db: Queryable;
  dns: Pick<MailDns, 'resolveTxt' | 'resolveHostAddresses'>;
  reporter: { organization: string; contact: string; host: string };
  /** POSTLINE_WEBHOOK_ALLOW_PRIVATE: tests and development may post to loopback. */
  allowPrivate: boolean;
  /** mailto reports: POSTLINE_TLSRPT_FROM (null: not sent), the secret the DKIM keys are stored under, and the mailer. */
  mail: { from: string | null; secret: string; mailer: ReportMailer };
  now: () => Date;
  timeoutMs?: number;
  /** Told about every address a report could not be delivered to. */
  onUndelivered?: (delivery: TlsReportDelivery, result: TlsReportResult) => void;
}

export interface TlsReportResult {
  uri: string;
  delivered: boolean;
  detail: string;
  /** Not delivered for a temporary reason: tried again later. */
  retry?: boolean;
}

export interface TlsReportDelivery {
  domain: string;
  day: string;
  /** Why nothing was sent, when nothing was. */
  skipped?: string;
  /** A failure of ours before any address was tried (a DNS answer or the database): the whole report is tried again later. */
  failed?: string;
  results: TlsReportResult[];
}

/** Tries in all, the first included; a retry waits RETRY_BASE_MS, then twice that, … (30 min, 1 h, 2 h, 4 h). */
export const MAX_REPORT_ATTEMPTS = 5;
const RETRY_BASE_MS = 30 * 60_000;

/** Sends the report of `domain` for `day` to the rua of its TLSRPT record (only to `only`, when given). */
export async function sendTlsReport(deps: TlsReportSendDeps, domain: string, day: string, only?: Set<string>): Promise<TlsReportDelivery> {
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
  const gzipped = gzipSync(JSON.stringify(report));
  const results: TlsReportResult[] = [];
  for (const uri of record.value.rua.filter((u) => !only || only.has(u))) {
    if (uri.toLowerCase().startsWith('mailto:')) {
      const mailed = await mailTlsReport({ db: deps.db, ...deps.mail, now: deps.now() }, uri, { json: report, gzipped, domain, submitter: deps.reporter.host });
      results.push({ uri, ...mailed });
      continue;
    }
    const posted = await guardedPost(new URL(uri), gzipped, { 'content-type': 'application/tlsrpt+gzip' }, {
      allowPrivate: deps.allowPrivate,
      timeoutMs: deps.timeoutMs ?? 30_000,
      resolve: async (host) => (await deps.dns.resolveHostAddresses(host)).addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    });
    if (posted.kind === 'response') {
      const delivered = posted.status >= 200 && posted.status < 300;
      results.push({ uri, delivered, detail: `HTTP ${posted.status}`, retry: !delivered && (posted.status >= 500 || posted.status === 429) });
    } else {
      results.push({ uri, delivered: false, detail: posted.error, retry: posted.kind !== 'forbidden' });
    }
  }
  return { domain, day, results };
}

/**
 * Yesterday's reports not yet sent by any worker, each claimed, sent and its outcome kept;
 * then the reports due for another try at the addresses that failed for a temporary reason.
 */
export async function sendDueTlsReports(deps: TlsReportSendDeps): Promise<TlsReportDelivery[]> {
  const now = deps.now();
  const day = previousUtcDay(now);
  const sent: TlsReportDelivery[] = [];
  for (const domain of await tlsReportDomainsOn(deps.db, day)) {
    if (!(await claimTlsReportSend(deps.db, domain, day, now))) continue;
    const delivery = await attempt(deps, domain, day);
    await finish(deps, delivery, delivery.results, 1, now);
    sent.push(delivery);
  }
  for (const due of await claimTlsReportRetries(deps.db, now)) {
    const before = due.outcome as TlsReportDelivery;
    // After a failure of ours no address was tried: all of them are, this time.
    const again = before.failed !== undefined ? undefined : new Set(before.results.filter((r) => r.retry).map((r) => r.uri));
    const retried = await attempt(deps, due.domain, due.day, again);
    // The addresses not tried again keep their result; a vanished record ends the retries.
    const byUri = new Map(retried.results.map((r) => [r.uri, r]));
    const delivery: TlsReportDelivery = !again || retried.failed !== undefined ? retried : {
      ...retried,
      results: retried.skipped ? before.results.map((r) => ({ ...r, retry: false })) : before.results.map((r) => byUri.get(r.uri) ?? (again.has(r.uri) ? { ...r, retry: false } : r)),
    };
    await finish(deps, delivery, retried.results, due.attempts, now);
    sent.push(delivery);
  }
  return sent;
}

/**
 * One claimed try. A failure of ours becomes the try's outcome (kept, logged, tried again like
 * a temporary failure) instead of an exception that would leave the claim without an outcome,
 * never to be tried again.
 */
async function attempt(deps: TlsReportSendDeps, domain: string, day: string, only?: Set<string>): Promise<TlsReportDelivery> {
  try {
    return await sendTlsReport(deps, domain, day, only);
  } catch (err) {
    return { domain, day, failed: err instanceof Error ? err.message : String(err), results: [] };
  }
}

/** Keeps the outcome, says what was not delivered this time, and schedules the next try (or none: the last try, or nothing temporary). */
async function finish(deps: TlsReportSendDeps, delivery: TlsReportDelivery, tried: TlsReportResult[], attempts: number, now: Date): Promise<void> {
  const tryAgain = attempts < MAX_REPORT_ATTEMPTS && (delivery.failed !== undefined || delivery.results.some((r) => r.retry));
  if (delivery.failed !== undefined) deps.onUndelivered?.(delivery, { uri: '(every address)', delivered: false, detail: delivery.failed, retry: tryAgain });
  if (!tryAgain) for (const r of delivery.results) if (r.retry) r.retry = false;
  for (const r of tried) if (!r.delivered) deps.onUndelivered?.(delivery, r);
  const retryAt = tryAgain ? new Date(now.getTime() + RETRY_BASE_MS * 2 ** (attempts - 1)) : null;
  await recordTlsReportSend(deps.db, delivery.domain, delivery.day, delivery, retryAt);
}
