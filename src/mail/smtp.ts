/**
 * Outbound SMTP: hands one raw, already signed message to one MX host (or to the configured
 * relay) with nodemailer, and turns whatever happens into a DeliveryResult (classify.ts).
 * It never throws for a delivery failure.
 *
 * Connections are reused per destination: one pooled nodemailer transport per host:port,
 * holding at most `maxConnectionsPerHost` connections (the per-host concurrency cap; excess
 * messages wait in the pool's queue) that close after `idleTimeoutMs` without work.
 * Transports unused for longer are dropped, so a worker that has talked to thousands of
 * domains does not keep thousands of pools.
 *
 * MX delivery: STARTTLS when offered, certificates not verified (RFC 7435 opportunistic
 * security: MX certificates rarely match and refusing them would only push mail to
 * plaintext), and a failed upgrade falls back to plaintext. Relay delivery verifies the
 * relay's certificate (credentials travel over it) unless the relay URL says
 * `?tls.rejectUnauthorized=false`.
 */
import { isIP } from 'node:net';
import { createTransport } from 'nodemailer';
import type { MxHost } from './dns.js';
import { classifySmtpError, type DeliveryResult } from './classify.js';

/** One MX host: `host` is the exchange name (SNI, logs); `address` the IP to connect to, if resolved. */
export interface MxTarget {
  kind: 'mx';
  host: string;
  address?: string;
  /** config.mxPort: 25 in production, a local test MX in tests. */
  port: number;
}

/** The smarthost of POSTLINE_DELIVERY=relay: `smtp[s]://user:pass@host:port`. */
export interface RelayTarget {
  kind: 'relay';
  url: string;
}

export type SmtpTarget = MxTarget | RelayTarget;

export interface SmtpEnvelope {
  /** MAIL FROM: the VERP return path (verp.ts). */
  from: string;
  /** RCPT TO: one recipient per message. */
  to: string;
}

export interface SmtpSenderOptions {
  /** Our EHLO name: the sending host's public name (with matching reverse DNS in production). */
  heloName: string;
  maxConnectionsPerHost?: number;
  maxMessagesPerConnection?: number;
  idleTimeoutMs?: number;
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  socketTimeoutMs?: number;
  /** Receives transport-level errors that belong to no message (already reflected in results). */
  onTransportError?: (key: string, err: Error) => void;
}

type Transport = ReturnType<typeof createTransport>;

/**
 * A connection slot of traffic shaping (src/delivery/shaping.ts): a transport of one
 * connection at most, reused while its target stays the same and replaced when it changes,
 * so the connections to a destination never outnumber its slots.
 */
export interface SlotVia {
  slot: string;
}

interface PoolEntry {
  /** host:port or the relay URL the transport talks to. */
  target: string;
  transport: Transport;
  lastUsed: number;
  inFlight: number;
}

/** At most this many connection attempts per message across a domain's MX hosts. */
const MAX_MX_ATTEMPTS = 5;

export class SmtpSender {
  private readonly pools = new Map<string, PoolEntry>();
  private readonly opts: Required<Omit<SmtpSenderOptions, 'onTransportError'>> & Pick<SmtpSenderOptions, 'onTransportError'>;
  private closed = false;

  constructor(opts: SmtpSenderOptions) {
    this.opts = {
      maxConnectionsPerHost: 3,
      maxMessagesPerConnection: 100,
      idleTimeoutMs: 30_000,
      connectionTimeoutMs: 30_000,
      greetingTimeoutMs: 30_000,
      socketTimeoutMs: 120_000,
      ...opts,
    };
  }

  /** Deliver `raw` to one host (or the relay). One result, never a throw. */
  async send(target: SmtpTarget, envelope: SmtpEnvelope, raw: Buffer, via?: SlotVia): Promise<DeliveryResult> {
    const mx = target.kind === 'mx' ? target.host : relayHost(target.url);
    if (this.closed) return classifySmtpError(new Error('sender is closed'), mx);
    this.sweepIdle();
    const entry = this.pool(target, via);
    entry.inFlight++;
    try {
      const info = await entry.transport.sendMail({ envelope: { from: envelope.from, to: [envelope.to] }, raw });
      return { kind: 'delivered', response: String(info.response ?? '250 OK').trim(), mx };
    } catch (err) {
      return classifySmtpError(err, mx);
    } finally {
      entry.inFlight--;
      entry.lastUsed = Date.now();
    }
  }

  /**
   * Deliver through a domain's MX hosts in preference order (dns.ts resolveMx), moving to the
   * next host or address only when the failure was the host's (unreachable, timeout, 421):
   * a reply about the message or the recipient is final for this attempt.
   */
  async sendToMxHosts(
    hosts: MxHost[],
    port: number,
    envelope: SmtpEnvelope,
    raw: Buffer,
    opts: { via?: SlotVia; final?: (r: DeliveryResult) => boolean } = {},
  ): Promise<DeliveryResult> {
    let last: DeliveryResult | undefined;
    let attempts = 0;
    for (const host of hosts) {
      for (const address of host.addresses.slice(0, 2)) {
        if (attempts++ >= MAX_MX_ATTEMPTS) return last!;
        last = await this.send({ kind: 'mx', host: host.exchange, address, port }, envelope, raw, opts.via);
        // A throttle reply (opts.final) speaks for every host of the destination.
        if (!(last.kind === 'deferred' && last.hostFailure) || opts.final?.(last)) return last;
      }
    }
    return last ?? classifySmtpError(new Error('no MX host to try'), null);
  }

  /** Close every pooled connection (shutdown, tests). */
  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.pools.values()) entry.transport.close();
    this.pools.clear();
  }

  /** Closes a slot's connection (its slot was taken back). */
  closeSlot(slot: string): void {
    const key = `slot:${slot}`;
    this.pools.get(key)?.transport.close();
    this.pools.delete(key);
  }

  private pool(target: SmtpTarget, via?: SlotVia): PoolEntry {
    const targetKey = target.kind === 'mx' ? `mx:${target.address ?? target.host}:${target.port}` : `relay:${target.url}`;
    const key = via ? `slot:${via.slot}` : targetKey;
    let entry = this.pools.get(key);
    if (entry && entry.target !== targetKey) {
      entry.transport.close();
      entry = undefined;
    }
    if (!entry) {
      // A slot's connection is closed by shaping (messagesPerConnection, a smaller grant), never by the pool itself.
      const limits = via ? { maxConnections: 1, maxMessages: Infinity } : {};
      const transport = createTransport({ ...this.commonOptions(), ...limits, ...(target.kind === 'mx' ? mxOptions(target) : { url: target.url }) });
      // Errors reach the waiting sendMail callbacks; this only keeps a stray one from crashing.
      transport.on('error', (err) => this.opts.onTransportError?.(key, err));
      entry = { target: targetKey, transport, lastUsed: Date.now(), inFlight: 0 };
      this.pools.set(key, entry);
    }
    return entry;
  }

  private commonOptions() {
    return {
      pool: true as const,
      name: this.opts.heloName,
      maxConnections: this.opts.maxConnectionsPerHost,
      maxMessages: this.opts.maxMessagesPerConnection,
      idleTimeout: this.opts.idleTimeoutMs,
      // A connection dropped mid-send is retried once on a fresh connection, then reported.
      maxRequeues: 1,
      connectionTimeout: this.opts.connectionTimeoutMs,
      greetingTimeout: this.opts.greetingTimeoutMs,
      socketTimeout: this.opts.socketTimeoutMs,
      logger: false,
    };
  }

  /** Drop transports that have had nothing to do for twice the idle timeout. */
  private sweepIdle(): void {
    const cutoff = Date.now() - 2 * this.opts.idleTimeoutMs;
    for (const [key, entry] of this.pools) {
      if (entry.inFlight === 0 && entry.lastUsed < cutoff) {
        entry.transport.close();
        this.pools.delete(key);
      }
    }
  }
}

function mxOptions(target: MxTarget) {
  const servername = isIP(target.host) ? undefined : target.host;
  return {
    host: target.address ?? target.host,
    port: target.port,
    secure: false,
    opportunisticTLS: true,
    servername,
    tls: { rejectUnauthorized: false, servername },
  };
}

function relayHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'relay';
  }
}
