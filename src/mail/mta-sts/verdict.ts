/**
 * What an MTA-STS policy means for one delivery (RFC 8461 §4 and §5):
 * - `enforce`: only MX hosts matching the policy's patterns may be tried, each only over
 *   STARTTLS with a certificate valid for the MX host name; anything else defers, never
 *   falls back to plaintext.
 * - `testing`: delivery proceeds as without a policy, but each session is judged as if it
 *   were enforced, and the failures are reported (TLS reporting, RFC 8460).
 * - `none`, no policy, or a policy that could not be had: opportunistic TLS as always.
 */
import type { MxHost } from '../dns.js';
import type { CertificateFailure } from '../tls-failure.js';
import { policyAllowsMx, type StsMode } from './policy.js';
import type { StsLookup } from './resolver.js';

export interface StsDeliveryPlan {
  mode: StsMode;
  /** The hosts to try, in preference order. */
  hosts: MxHost[];
  /**
   * `required`: STARTTLS with a certificate valid for the host name or no delivery (enforce).
   * `checked`: tried that way first, failures recorded, then delivered as without a policy (testing).
   * `opportunistic`: STARTTLS when offered, certificate not checked (RFC 7435).
   */
  tls: 'required' | 'checked' | 'opportunistic';
  /** MX hosts the policy does not list: left out under enforce, reported under testing. */
  unlisted: string[];
  /** Under enforce when no MX host is listed by the policy: why the message waits. */
  refusal?: string;
}

export function planStsDelivery(domain: string, lookup: StsLookup | null, hosts: MxHost[]): StsDeliveryPlan {
  if (!lookup || lookup.kind !== 'policy' || lookup.cached.policy.mode === 'none') {
    return { mode: 'none', hosts, tls: 'opportunistic', unlisted: [] };
  }
  const { policy } = lookup.cached;
  const listed = hosts.filter((h) => policyAllowsMx(policy, h.exchange));
  const unlisted = hosts.filter((h) => !listed.includes(h)).map((h) => h.exchange);
  if (policy.mode === 'testing') return { mode: 'testing', hosts, tls: 'checked', unlisted };
  const plan: StsDeliveryPlan = { mode: 'enforce', hosts: listed, tls: 'required', unlisted };
  if (listed.length === 0) {
    plan.refusal = `mta-sts: no MX host of ${domain} (${unlisted.join(', ')}) matches its enforced policy (mx: ${policy.mx.join(', ')})`;
  }
  return plan;
}

/** How one SMTP session's TLS went, judged against a policy (RFC 8460 result types). */
export type TlsSessionOutcome =
  | { result: 'success' }
  | { result: 'starttls-not-supported'; detail: string }
  | { result: CertificateFailure; detail: string };

/** The deferral text for an enforced policy the session failed: says which host and why. */
export function stsDeferralReason(domain: string, host: string, outcome: Exclude<TlsSessionOutcome, { result: 'success' }>): string {
  const what =
    outcome.result === 'starttls-not-supported' ? 'offers no STARTTLS'
    : outcome.result === 'certificate-host-mismatch' ? 'presents a certificate for another name'
    : outcome.result === 'certificate-expired' ? 'presents an expired certificate'
    : outcome.result === 'certificate-not-trusted' ? 'presents a certificate no trusted CA signed'
    : 'presents a certificate that does not validate';
  return `mta-sts: ${host} ${what} (${domain} enforces TLS; ${outcome.detail})`;
}
