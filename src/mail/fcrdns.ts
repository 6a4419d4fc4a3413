/**
 * Forward-confirmed reverse DNS of a sending address (docs/dns-setup.md): its EHLO name
 * must resolve to its address, and its address's PTR record must give back the name. Gmail,
 * Microsoft and Yahoo refuse or junk mail from addresses without it, so a mismatch is said
 * loudly at start-up — but it is a warning, not a refusal: DNS may be catching up, and the
 * operator may know better.
 */
import type { MailDns } from './dns.js';

export interface SourceCheck {
  name: string;
  address: string;
  ehlo: string;
  /** The addresses the EHLO name resolves to. */
  forward: string[];
  /** The names the address's PTR records give. */
  reverse: string[];
  ok: boolean;
  /** What is wrong, for the log and the dashboard; null when ok. */
  warning: string | null;
  checkedAt: Date;
}

/** IPv6 answers may be written differently (`::1` vs `0:0:…:1`): compare in one form. */
function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return new URL(`http://[${a}]/`).hostname === new URL(`http://[${b}]/`).hostname;
  } catch {
    return false;
  }
}

export async function checkSourceDns(dns: Pick<MailDns, 'resolveHostAddresses' | 'reverse'>, source: { name: string; address: string; ehlo: string }, now: Date): Promise<SourceCheck> {
  const problems: string[] = [];
  const forward = await dns.resolveHostAddresses(source.ehlo);
  if (forward.tempError && forward.addresses.length === 0) {
    problems.push(`could not resolve ${source.ehlo} (${forward.tempError}); checked again at the next start`);
  } else if (!forward.addresses.some((a) => sameAddress(a, source.address))) {
    problems.push(forward.addresses.length === 0
      ? `${source.ehlo} has no A/AAAA record (it must resolve to ${source.address})`
      : `${source.ehlo} resolves to ${forward.addresses.join(', ')}, not ${source.address}`);
  }
  let reverse: string[] = [];
  try {
    reverse = (await dns.reverse(source.address)) ?? [];
    if (reverse.length === 0) problems.push(`${source.address} has no PTR record (it must name ${source.ehlo})`);
    else if (!reverse.includes(source.ehlo)) problems.push(`the PTR record of ${source.address} names ${reverse.join(', ')}, not ${source.ehlo}`);
  } catch (err) {
    problems.push(`could not look up the PTR record of ${source.address} (${(err as Error).message}); checked again at the next start`);
  }
  return {
    name: source.name,
    address: source.address,
    ehlo: source.ehlo,
    forward: forward.addresses,
    reverse,
    ok: problems.length === 0,
    warning: problems.length ? `source ${source.name}: forward-confirmed reverse DNS fails: ${problems.join('; ')}` : null,
    checkedAt: now,
  };
}
