import { isIP } from 'node:net';
import { dkimRecordName } from '../../mail/dkim.js';
import { DnsTempError, normalizeName, type MailDns } from '../../mail/dns.js';
import { bounceDomainFor, trackingHostFor } from './name.js';

/**
 * The DNS records a sender domain needs, and checking what is actually published.
 *
 *   dkim          TXT   plr-…._domainkey.<domain>   RSA-2048 key; the one that verifies the domain
 *   dkim_ed25519  TXT   ple-…._domainkey.<domain>   Ed25519 key (RFC 8463), second signature
 *   return_path   MX    bounces.<domain>            → our inbound SMTP host: bounces come back to us
 *   spf           TXT   bounces.<domain>            SPF is checked against MAIL FROM, i.e. here
 *   dmarc         TXT   _dmarc.<domain>             suggestion (p=none); any DMARC record counts
 *   tracking      CNAME track.<domain>              → POSTLINE_TRACKING_HOST (optional white-label)
 *
 * Checks return data (status + a human detail), never throw: one record's DNS trouble must
 * not hide the others' results.
 */
export type RecordPurpose = 'dkim' | 'dkim_ed25519' | 'return_path' | 'spf' | 'dmarc' | 'tracking';
export type RecordCheckStatus = 'verified' | 'missing' | 'mismatch' | 'temp_error';
export type RecordStatus = 'pending' | RecordCheckStatus;

export interface RecordCheck {
  status: RecordCheckStatus;
  detail: string | null;
}

/** Where our side lives, from the configuration. */
export interface DnsTargets {
  /** Host of POSTLINE_BASE_URL: the inbound SMTP listener bounces are sent to. */
  returnPathHost: string;
  /** POSTLINE_TRACKING_HOST. */
  trackingHost: string;
  /** The source addresses of the delivery policy (docs/sending-identity.md): when there are any, mail leaves from them, so SPF names them instead of the host. */
  sourceAddresses?: string[];
}

export interface ExpectedRecord {
  type: 'TXT' | 'MX' | 'CNAME';
  name: string;
  value: string;
  /** MX only. */
  priority?: number;
  purpose: RecordPurpose;
  /** Only the RSA DKIM record decides verification; the others improve deliverability. */
  required: boolean;
}

export interface DomainKeysPublic {
  name: string;
  rsa_selector: string;
  rsa_public_txt: string;
  ed_selector: string;
  ed_public_txt: string;
}

export const RETURN_PATH_MX_PRIORITY = 10;
export const DMARC_SUGGESTION = 'v=DMARC1; p=none;';

/** The SPF mechanism that authorises our host: `a:host`, or `ip4:`/`ip6:` when the base URL names an address. */
export function spfMechanism(host: string): string {
  const h = host.replace(/^\[|\]$/g, '');
  const family = isIP(h);
  return family === 4 ? `ip4:${h}` : family === 6 ? `ip6:${h}` : `a:${normalizeName(h)}`;
}

/** The mechanisms that authorise where our mail leaves from: every source address, else the host. */
export function spfMechanisms(host: string, sourceAddresses: string[] = []): string[] {
  return sourceAddresses.length ? sourceAddresses.map(spfMechanism) : [spfMechanism(host)];
}

export function spfRecordValue(host: string, sourceAddresses: string[] = []): string {
  return `v=spf1 ${spfMechanisms(host, sourceAddresses).join(' ')} ~all`;
}

export function expectedRecords(d: DomainKeysPublic, targets: DnsTargets): ExpectedRecord[] {
  const bounce = bounceDomainFor(d.name);
  return [
    { type: 'TXT', name: dkimRecordName(d.rsa_selector, d.name), value: d.rsa_public_txt, purpose: 'dkim', required: true },
    { type: 'TXT', name: dkimRecordName(d.ed_selector, d.name), value: d.ed_public_txt, purpose: 'dkim_ed25519', required: false },
    { type: 'MX', name: bounce, value: normalizeName(targets.returnPathHost), priority: RETURN_PATH_MX_PRIORITY, purpose: 'return_path', required: false },
    { type: 'TXT', name: bounce, value: spfRecordValue(targets.returnPathHost, targets.sourceAddresses), purpose: 'spf', required: false },
    { type: 'TXT', name: `_dmarc.${d.name}`, value: DMARC_SUGGESTION, purpose: 'dmarc', required: false },
    { type: 'CNAME', name: trackingHostFor(d.name), value: normalizeName(targets.trackingHost), purpose: 'tracking', required: false },
  ];
}

/** Tags of a DKIM key record; quotes and whitespace a DNS panel may have kept are dropped from `p`. */
function dkimTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.replaceAll('"', '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1);
    tags.set(key, key === 'p' ? value.replace(/\s+/g, '') : value.trim().toLowerCase());
  }
  return tags;
}

/** Published DKIM records against the expected one: same `p=` key (and `k=` type), however it was chunked or quoted. */
export function compareDkim(published: string[] | null, expected: string): RecordCheck {
  if (!published || published.length === 0) return { status: 'missing', detail: 'no TXT record at this name' };
  const want = dkimTags(expected);
  const found = published.map(dkimTags).filter((t) => t.has('p'));
  if (found.some((t) => t.get('p') === want.get('p') && (t.get('k') ?? 'rsa') === want.get('k'))) return { status: 'verified', detail: null };
  if (found.length === 0) return { status: 'mismatch', detail: 'a TXT record exists here but it is not a DKIM key (no p= tag)' };
  if (found.some((t) => t.get('p') === '')) return { status: 'mismatch', detail: 'the published DKIM key is empty (p=), i.e. revoked' };
  return { status: 'mismatch', detail: 'a DKIM key is published here but it is not this domain\'s key; copy the value again' };
}

export function compareSpf(published: string[] | null, host: string, sourceAddresses: string[] = []): RecordCheck {
  const spf = (published ?? []).map((r) => r.replaceAll('"', '').trim()).filter((r) => /^v=spf1(\s|$)/i.test(r));
  if (spf.length === 0) return { status: 'missing', detail: 'no SPF (v=spf1) record at this name' };
  if (spf.length > 1) return { status: 'mismatch', detail: 'more than one SPF record: receivers treat that as a permanent error (RFC 7208 §4.5)' };
  const terms = spf[0].toLowerCase().split(/\s+/).map((t) => t.replace(/^\+/, ''));
  const missing = spfMechanisms(host, sourceAddresses).map((m) => m.toLowerCase()).filter((m) => !terms.includes(m));
  return missing.length === 0
    ? { status: 'verified', detail: null }
    : { status: 'mismatch', detail: `SPF record "${spf[0]}" does not include ${missing.join(' ')}` };
}

export function compareDmarc(published: string[] | null): RecordCheck {
  const dmarc = (published ?? []).map((r) => r.replaceAll('"', '').trim()).filter((r) => /^v=DMARC1\s*(;|$)/i.test(r));
  if (dmarc.length === 0) return { status: 'missing', detail: 'no DMARC record (v=DMARC1)' };
  if (dmarc.length > 1) return { status: 'mismatch', detail: 'more than one DMARC record: receivers then apply none (RFC 7489 §6.6.3)' };
  return { status: 'verified', detail: dmarc[0] };
}

/** For MX exchanges and CNAME targets: one of them must be our host (case and trailing dot ignored). */
export function compareHost(published: string[] | null, host: string, what: string): RecordCheck {
  if (!published || published.length === 0) return { status: 'missing', detail: `no ${what} record at this name` };
  const want = normalizeName(host);
  const names = published.map(normalizeName);
  return names.includes(want)
    ? { status: 'verified', detail: null }
    : { status: 'mismatch', detail: `${what} points to ${names.join(', ')}, not ${want}` };
}

/** MX exchanges at `name`, null when there are none; DnsTempError on anything else. */
async function mxExchanges(dns: Pick<MailDns, 'resolver'>, name: string): Promise<string[] | null> {
  try {
    return (await dns.resolver.resolveMx(name)).map((r) => r.exchange);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException)?.code ?? 'EUNKNOWN';
    if (code === 'ENOTFOUND' || code === 'ENODATA') return null;
    throw new DnsTempError(name, 'MX', code);
  }
}

async function settle(lookup: () => Promise<RecordCheck>): Promise<RecordCheck> {
  try {
    return await lookup();
  } catch (err) {
    if (err instanceof DnsTempError) return { status: 'temp_error', detail: err.message };
    throw err;
  }
}

export type DomainDns = Pick<MailDns, 'resolver' | 'resolveTxt' | 'resolveCname'>;

export function checkRecord(dns: DomainDns, record: ExpectedRecord, targets: DnsTargets): Promise<RecordCheck> {
  switch (record.purpose) {
    case 'dkim':
    case 'dkim_ed25519':
      return settle(async () => compareDkim(await dns.resolveTxt(record.name), record.value));
    case 'spf':
      return settle(async () => compareSpf(await dns.resolveTxt(record.name), targets.returnPathHost, targets.sourceAddresses));
    case 'dmarc':
      return settle(async () => compareDmarc(await dns.resolveTxt(record.name)));
    case 'return_path':
      return settle(async () => compareHost(await mxExchanges(dns, record.name), targets.returnPathHost, 'MX'));
    case 'tracking':
      return settle(async () => compareHost(await dns.resolveCname(record.name), targets.trackingHost, 'CNAME'));
  }
}

/** Every record looked up at once; the result is keyed by purpose. */
export async function checkRecords(dns: DomainDns, records: ExpectedRecord[], targets: DnsTargets): Promise<Record<RecordPurpose, RecordCheck>> {
  const results = await Promise.all(records.map((r) => checkRecord(dns, r, targets)));
  return Object.fromEntries(records.map((r, i) => [r.purpose, results[i]])) as Record<RecordPurpose, RecordCheck>;
}

/** Tracking follows its CNAME: confirmed → verified, absent or elsewhere → failed, DNS trouble → unchanged (null). */
export function trackingStatusOf(check: RecordCheck): 'verified' | 'failed' | null {
  if (check.status === 'verified') return 'verified';
  return check.status === 'temp_error' ? null : 'failed';
}
