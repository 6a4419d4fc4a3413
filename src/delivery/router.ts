import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { MessageRow } from '../db/queries/messages.js';
import { databaseStsPolicyStore } from '../db/queries/mta-sts-policies.js';
import { destinationFor, relayDestination } from '../delivery-policy.js';
import { classifyMxFailure, type DeliveryResult } from '../mail/classify.js';
import { createMailDns, type MailDns, type MxHost } from '../mail/dns.js';
import { StsPolicyResolver, type StsLookup } from '../mail/mta-sts/resolver.js';
import type { Source } from '../sending-identity.js';
import type { Gate } from './gate.js';
import type { Shaping } from './shaping.js';
import { SourcePicker } from './sources/picker.js';

/** Where a message goes: its destination's gate, the MX hosts (null: the relay), the source address, the domain's MTA-STS policy. */
export interface Route {
  gate: Gate;
  hosts: MxHost[] | null;
  source: Source | null;
  sts: StsLookup | null;
}

/**
 * Routes each message of the delivery engine (./engine.ts) to its destination: the relay, or
 * the recipient domain's MX hosts rolled up into their provider (delivery-policy.ts), on the
 * source address the message leaves from (./sources/picker.ts), with the domain's MTA-STS policy.
 */
export class DestinationRouter {
  private readonly dns: MailDns;
  /** Which source address each message leaves from (./sources/picker.ts). */
  private readonly sources: SourcePicker;
  /** Recipient domains' MTA-STS policies, cached for every worker (mail/mta-sts/). */
  private readonly sts: StsPolicyResolver;

  /** What the engine was given (./engine.ts, DeliveryDeps), and its shaping, whose gates the destinations' mail takes turns at. */
  constructor(private readonly deps: { pool: Pool; config: Config; clock: Clock; log: Logger; dns?: MailDns; extraCa?: string[]; shaping: Shaping }) {
    this.dns = deps.dns ?? createMailDns({ servers: deps.config.dnsServers, clock: deps.clock });
    this.sources = new SourcePicker({ db: deps.pool, identity: deps.config.deliveryPolicy.identity, clock: deps.clock });
    this.sts = new StsPolicyResolver({
      dns: this.dns,
      store: databaseStsPolicyStore(deps.pool),
      clock: deps.clock,
      fetch: { port: deps.config.mtaStsPort, extraCa: deps.extraCa },
    });
  }

  /**
   * The recipient's destination and its gate (the relay, or the MX hosts' provider on the
   * message's source address), with the domain's MTA-STS policy; or a failed lookup; or, when
   * the source's warm-up cap is reached and it does not spill, when to try again.
   */
  async route(msg: MessageRow): Promise<Route | { waitUntil: Date } | DeliveryResult> {
    const policy = this.deps.config.deliveryPolicy;
    // A relay's own addresses are what receivers see: sources and MTA-STS are the relay's business.
    if (this.deps.config.delivery === 'relay') return { gate: this.deps.shaping.gate(relayDestination(policy)), hosts: null, source: null, sts: null };
    const lookup = await this.dns.resolveMx(msg.to_domain);
    if (!lookup.ok) return classifyMxFailure(lookup);
    let dest = destinationFor(policy, lookup.hosts.map((h) => h.exchange));
    let source: Source | null = null;
    if (this.sources.active) {
      const pick = await this.sources.pick(msg, dest.key);
      if ('waitUntil' in pick) return { waitUntil: pick.waitUntil };
      source = pick.source;
      dest = { ...dest, source: source.name };
    }
    return { gate: this.deps.shaping.route(msg.to_domain, dest), hosts: lookup.hosts, source, sts: await this.stsPolicyOf(msg.to_domain) };
  }

  /** The domain's MTA-STS policy; a failure of our own (the database) delivers as without one, and says so. */
  private async stsPolicyOf(domain: string): Promise<StsLookup | null> {
    try {
      return await this.sts.policyFor(domain);
    } catch (err) {
      this.deps.log.warn({ err, domain }, 'could not look up the MTA-STS policy; delivering without it');
      return null;
    }
  }
}
