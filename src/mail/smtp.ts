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
 * plaintext), and a failed upgrade falls back to plaintext — unless the target asks for
 * `tls: 'verified'` (an MTA-STS policy, mail/mta-sts/): then STARTTLS is required, the
 * certificate must be valid for the MX host name, and a failure is never retried in
 * plaintext; the result carries what went wrong (`tlsFailure`). A target may name the
 * source address to connect from and its EHLO name (delivery/sources/). Relay delivery verifies the
 * relay's certificate (credentials travel over it) unless the relay URL says
 * `?tls.rejectUnauthorized=false`.
 */
import { isIP } from 'node:net';
import { createTransport } from 'nodemailer';
import type { MxHost } from './dns.js';
import { rootCertificates } from 'node:tls';
import { classifySmtpError, fixedVerdict, type DeliveryResult, type Deferred } from './classify.js';
import { certificateFailureOf } from './tls-failure.js';

/** One MX host: `host` is the exchange name (SNI, logs); `address` the IP to connect to, if resolved. */
export interface MxTarget {
  kind: 'mx';
  host: string;
  address?: string;
  /** config.mxPort: 25 in production, a local test MX in tests. */
  port: number;
  /** Connect from this local address and greet with this name (a source of the delivery policy). */
  source?: { address: string; ehlo: string };
  /** `verified`: STARTTLS required with a certificate valid for `host` (MTA-STS). Default opportunistic. */
  tls?: 'opportunistic' | 'verified';
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
  /** CA certificates (PEM) trusted for verified MX sessions besides Node's roots. Unset: Node's store (with NODE_EXTRA_CA_CERTS). */
  extraCa?: string[];
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
  private readonly opts: Required<Omit<SmtpSenderOptions, 'onTransportError' | 'extraCa'>> & Pick<SmtpSenderOptions, 'onTransportError' | 'extraCa'>;
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
      if (target.kind === 'mx' && target.tls === 'verified') {
        const failure = tlsFailureOf(err);
        if (failure) return tlsFailed(failure, mx);
      }
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
    // The source address and TLS mode are part of the target: a slot that changes either gets a new connection.
    const targetKey = target.kind === 'mx'
      ? `mx:${target.address ?? target.host}:${target.port}:${target.source?.address ?? ''}:${target.tls === 'verified' ? `verified:${target.host}` : ''}`
      : `relay:${target.url}`;
    const key = via ? `slot:${via.slot}` : targetKey;
    let entry = this.pools.get(key);
    if (entry && entry.target !== targetKey) {
      entry.transport.close();
      entry = undefined;
    }
    if (!entry) {
      // A slot's connection is closed by shaping (messagesPerConnection, a smaller grant), never by the pool itself.
      const limits = via ? { maxConnections: 1, maxMessages: Infinity } : {};
      const transport = createTransport({ ...this.commonOptions(), ...limits, ...(target.kind === 'mx' ? mxOptions(target, this.opts.extraCa) : { url: target.url }) });
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

function mxOptions(target: MxTarget, extraCa: string[] | undefined) {
  const servername = isIP(target.host) ? undefined : target.host;
  const source = target.source ? { localAddress: target.source.address, name: target.source.ehlo } : {};
  if (target.tls === 'verified') {
    return {
      host: target.address ?? target.host,
      port: target.port,
      secure: false,
      requireTLS: true,
      servername,
      tls: { rejectUnauthorized: true, servername, ...(extraCa ? { ca: [...rootCertificates, ...extraCa] } : {}) },
      ...source,
    };
  }
  return {
    host: target.address ?? target.host,
    port: target.port,
    secure: false,
    opportunisticTLS: true,
    servername,
    tls: { rejectUnauthorized: false, servername },
    ...source,
  };
}

/**
 * A verified session that failed at STARTTLS or at the certificate: what went wrong, in TLS
 * reporting's words, or null when the failure was something else (connection, a reply). A
 * server without STARTTLS answers the command with 500/502, which must not read as a refusal
 * of the message; nodemailer reports a failed upgrade as ETLS with OpenSSL's text.
 */
function tlsFailureOf(err: unknown): NonNullable<Deferred['tlsFailure']> | null {
  const e = (err ?? {}) as { code?: string; command?: string; response?: string; message?: string };
  const detail = (e.response ?? e.message ?? String(err)).trim();
  const cert = certificateFailureOf(err);
  if (cert) return { result: cert, detail };
  if (e.command === 'STARTTLS') return { result: 'starttls-not-supported', detail };
  if (e.code === 'ETLS') return { result: 'validation-failure', detail };
  return null;
}

/** A deferral (the host's failure: the next MX may do better), never a bounce: the message is fine. */
function tlsFailed(failure: NonNullable<Deferred['tlsFailure']>, mx: string): Deferred {
  const enhanced = failure.result === 'starttls-not-supported' ? '4.7.10' : '4.7.5';
  return { kind: 'deferred', response: failure.detail, code: null, enhanced, mx, hostFailure: true, verdict: fixedVerdict('security_error', enhanced, false), tlsFailure: failure };
}

function relayHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'relay';
  }
}
