/**
 * Delivery to a domain's MX hosts under its MTA-STS policy (RFC 8461 §5), as one step the
 * delivery engine calls instead of trying the hosts itself:
 * - enforce: only the hosts the policy lists, each over STARTTLS with a certificate valid
 *   for its name; a host that fails that is skipped, and when none is left the message is
 *   deferred with the reason ("mta-sts: mx1.example.com offers no STARTTLS …"). Never plaintext.
 * - testing: each listed host is tried the enforced way first; a TLS failure is recorded and
 *   the message goes as without a policy (opportunistic TLS) over a fresh connection.
 * - none / no policy: opportunistic TLS, as always.
 * Every session judged against a policy is returned for TLS reporting (RFC 8460). The
 * source address, when there is one, is bound to every connection; MX addresses of the other
 * IP family are left out (an IPv4 source cannot reach an IPv6 MX address).
 */
import { isIP } from 'node:net';
import { classifySmtpError, fixedVerdict, type Deferred, type DeliveryResult } from '../classify.js';
import type { MxHost } from '../dns.js';
import type { MxTarget } from '../smtp.js';
import type { TlsSessionResult } from '../tls-rpt/report.js';
import type { StsLookup } from './resolver.js';
import { planStsDelivery, stsDeferralReason } from './verdict.js';

export interface StsDeliveryInput {
  domain: string;
  hosts: MxHost[];
  port: number;
  source?: { address: string; ehlo: string };
  /** The domain's policy lookup; null when MTA-STS is not consulted (relay, capture). */
  lookup: StsLookup | null;
  /** Hands the message to one target (SmtpSender.send with the envelope and bytes bound). */
  send: (target: MxTarget) => Promise<DeliveryResult>;
  /** A result that speaks for every host (a throttle reply): no further host is tried. */
  isFinal?: (r: DeliveryResult) => boolean;
}

export interface StsDeliveryOutcome {
  result: DeliveryResult;
  /** Sessions judged against the policy, for TLS reporting; empty without one. */
  sessions: TlsSessionResult[];
}

/** At most this many connection attempts per message across a domain's MX hosts (as SmtpSender's). */
const MAX_MX_ATTEMPTS = 5;

function stsDeferral(response: string, mx: string | null, enhanced: string): Deferred {
  return { kind: 'deferred', response, code: null, enhanced, mx, hostFailure: true, verdict: fixedVerdict('security_error', enhanced, false) };
}

/** Whether TLS was established: the server answered after STARTTLS (anything but a connection-level failure). */
const sessionHappened = (r: DeliveryResult) => r.kind !== 'deferred' || (r.code !== null && !r.hostFailure);

export async function deliverWithSts(input: StsDeliveryInput): Promise<StsDeliveryOutcome> {
  const { domain, lookup, source } = input;
  const plan = planStsDelivery(domain, lookup, input.hosts);
  const sessions: TlsSessionResult[] = [];
  const policy = lookup?.kind === 'policy' ? ({ type: 'sts', text: lookup.cached.text } as const) : null;
  const sendingIp = source?.address;
  if (lookup?.kind === 'unavailable') sessions.push({ policy: { type: 'sts', text: '' }, result: lookup.failure, sendingIp });
  if (plan.refusal) {
    sessions.push({ policy: policy!, result: 'validation-failure', receivingMx: plan.unlisted[0], sendingIp });
    return { result: stsDeferral(plan.refusal, null, '4.7.5'), sessions };
  }

  const family = source ? isIP(source.address) : 0;
  let last: DeliveryResult | undefined;
  let attempts = 0;
  for (const host of plan.hosts) {
    const listed = !plan.unlisted.includes(host.exchange);
    for (const address of host.addresses.filter((a) => family === 0 || isIP(a) === family).slice(0, 2)) {
      if (attempts++ >= MAX_MX_ATTEMPTS) return { result: last!, sessions };
      const target: MxTarget = { kind: 'mx', host: host.exchange, address, port: input.port, ...(source ? { source } : {}) };
      const where = { receivingMx: host.exchange, receivingIp: address, sendingIp };

      if (plan.tls === 'opportunistic') {
        last = await input.send(target);
      } else if (plan.tls === 'checked' && !listed) {
        sessions.push({ policy: policy!, result: 'validation-failure', ...where });
        last = await input.send(target);
      } else {
        last = await input.send({ ...target, tls: 'verified' });
        if (last.kind === 'deferred' && last.tlsFailure) {
          sessions.push({ policy: policy!, result: last.tlsFailure.result, ...where });
          if (plan.tls === 'required') {
            const enhanced = last.tlsFailure.result === 'starttls-not-supported' ? '4.7.10' : '4.7.5';
            last = stsDeferral(stsDeferralReason(domain, host.exchange, last.tlsFailure), host.exchange, enhanced);
            continue;
          }
          // testing: reported; delivered as without a policy.
          last = await input.send(target);
        } else if (sessionHappened(last)) {
          sessions.push({ policy: policy!, result: 'success' });
        }
      }
      if (!(last.kind === 'deferred' && last.hostFailure) || input.isFinal?.(last)) return { result: last, sessions };
    }
  }
  return { result: last ?? classifySmtpError(new Error(`no MX host of ${domain} to try${family ? ` from an IPv${family} source` : ''}`), null), sessions };
}
