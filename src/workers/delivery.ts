import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { withTransaction, type Pool } from '../db/pool.js';
import type { MessageRow } from '../db/queries/messages.js';
import { planOutcome, type PlannedOutcome } from '../domain/delivery-outcome.js';
import { bounceDomainFor, loadSigningKeys } from '../domain/domains.js';
import { recordEvents } from '../domain/events.js';
import { buildMessage, type SigningInfo } from '../domain/message-build.js';
import { suppressAddress } from '../domain/address-status.js';
import { TrackingLinks } from '../domain/tracking-links.js';
import { classifyMxFailure, type DeliveryResult } from '../mail/classify.js';
import { createMailDns, type MailDns } from '../mail/dns.js';
import { deriveKey } from '../mail/keyring.js';
import { SmtpSender } from '../mail/smtp.js';
import { claimDueMessages, completeMessages } from '../queue/messages.js';
import { captureMessage } from '../db/queries/captured.js';

export interface DeliveryDeps {
  pool: Pool;
  config: Config;
  clock: Clock;
  log: Logger;
  /** Tests pass a resolver pointed at their DNS server via config.dnsServers; this overrides it. */
  dns?: MailDns;
}

export interface DeliveryOptions {
  /** Messages claimed and in flight at once. */
  batchSize: number;
  leaseMs: number;
  maxConnectionsPerHost: number;
}

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = { batchSize: 200, leaseMs: 5 * 60_000, maxConnectionsPerHost: 10 };

const SIGNING_CACHE_MS = 60_000;

/**
 * The delivery engine of one worker process: claim due messages (SKIP LOCKED + lease), build
 * and sign each once, hand it to the recipient's MX (or the relay, or the capture store), and
 * record every outcome of the batch in one transaction with its events and suppressions.
 */
export class DeliveryEngine {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly links: TrackingLinks;
  private readonly verpKey: Buffer;
  private readonly dns: MailDns;
  private readonly sender: SmtpSender;
  private readonly signing = new Map<string, { info: SigningInfo; at: number }>();

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly opts: DeliveryOptions = DEFAULT_DELIVERY_OPTIONS,
  ) {
    this.links = new TrackingLinks(deps.config);
    this.verpKey = deriveKey(deps.config.secret, 'verp');
    this.dns = deps.dns ?? createMailDns({ servers: deps.config.dnsServers, clock: deps.clock });
    this.sender = new SmtpSender({ heloName: new URL(deps.config.baseUrl).hostname, maxConnectionsPerHost: opts.maxConnectionsPerHost });
  }

  /** One claim → deliver → record cycle. Returns how many messages it handled. */
  async runOnce(): Promise<number> {
    const now = this.deps.clock.now();
    const claimed = await claimDueMessages(this.deps.pool, this.workerId, now, this.opts.batchSize, this.opts.leaseMs);
    if (claimed.length === 0) return 0;
    const planned = await Promise.all(claimed.map((m) => this.deliverOne(m)));
    await this.record(planned.filter((p): p is PlannedOutcome => p !== null));
    return claimed.length;
  }

  async close(): Promise<void> {
    this.sender.close();
  }

  private async deliverOne(msg: MessageRow): Promise<PlannedOutcome | null> {
    const now = this.deps.clock.now();
    let result: DeliveryResult;
    try {
      const signing = await this.signingFor(msg);
      const built = await buildMessage(msg, signing, this.links, { bounceDomain: bounceDomainFor(signing.domain), verpKey: this.verpKey, now });
      result = await this.transmit(msg, built.returnPath, built.raw, now);
    } catch (err) {
      // Our own failure (domain deleted, key unreadable): fail the message, never the address.
      this.deps.log.error({ err, messageId: msg.id }, 'could not build message');
      result = { kind: 'hard_bounce', response: `not sent: ${(err as Error).message}`, code: null, enhanced: null, mx: null, ourFault: true };
    }
    return planOutcome(msg, result, this.deps.clock.now());
  }

  private async transmit(msg: MessageRow, returnPath: string, raw: Buffer, now: Date): Promise<DeliveryResult> {
    const envelope = { from: returnPath, to: msg.to_email };
    const { config } = this.deps;
    if (config.delivery === 'capture') {
      await captureMessage(this.deps.pool, { id: msg.id, accountId: msg.account_id, envelopeFrom: returnPath, envelopeTo: msg.to_email, subject: msg.subject, raw, at: now });
      return { kind: 'delivered', response: '250 captured locally (POSTLINE_DELIVERY=capture)', mx: null };
    }
    if (config.delivery === 'relay') return this.sender.send({ kind: 'relay', url: config.smtpRelay! }, envelope, raw);
    const lookup = await this.dns.resolveMx(msg.to_domain);
    if (!lookup.ok) return classifyMxFailure(lookup);
    return this.sender.sendToMxHosts(lookup.hosts, config.mxPort, envelope, raw);
  }

  private async signingFor(msg: MessageRow): Promise<SigningInfo> {
    if (!msg.domain_id) throw new Error('the sending domain was deleted');
    const cached = this.signing.get(msg.domain_id);
    if (cached && Date.now() - cached.at < SIGNING_CACHE_MS) return cached.info;
    const info = await loadSigningKeys(this.deps.pool, msg.domain_id, this.deps.config.secret);
    this.signing.set(msg.domain_id, { info, at: Date.now() });
    return info;
  }

  /** All outcomes of a batch in one transaction: states, events, suppressions. */
  private async record(planned: PlannedOutcome[]): Promise<void> {
    await withTransaction(this.deps.pool, async (tx) => {
      const updated = await completeMessages(tx, this.workerId, planned.map((p) => p.outcome));
      const mine = planned.filter((p) => updated.has(p.outcome.id));
      await recordEvents(tx, mine.map((p) => p.event));
      for (const p of mine.filter((p) => p.suppress)) {
        await suppressAddress(tx, p.event.accountId, p.event.email, 'hard_bounce', p.event.occurredAt);
      }
    });
  }
}
