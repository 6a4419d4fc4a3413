/**
 * Outbound SMTP: hands one raw, already signed message to one MX host (or to the configured
 * relay) and turns whatever happens into a DeliveryResult (classify.ts). It never throws for a
 * delivery failure.
 *
 * Connections are ours (smtp-session.ts: one nodemailer SMTPConnection each, reused for many
 * messages, the envelope pipelined where the server offers it), kept in lanes: a connection
 * slot of traffic shaping (src/delivery/shaping.ts) is a lane of one connection, which shaping
 * closes after the destination's messagesPerConnection or when it takes the slot back; a send
 * without a slot uses its host's lane of at most `maxConnectionsPerHost` connections (excess
 * messages wait their turn) that close after `maxMessagesPerConnection`. Either closes a
 * connection after `idleTimeoutMs` without work; lanes unused for longer are dropped, so a
 * worker that has talked to thousands of domains does not keep thousands of them.
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
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import type { MxHost } from './dns.js';
import { rootCertificates } from 'node:tls';
import { classifySmtpError, fixedVerdict, type DeliveryResult, type Deferred } from './classify.js';
import { certificateFailureOf } from './tls-failure.js';
import { SmtpSession, type SendFailure, type SessionAuth, type SessionOptions } from './smtp-session.js';

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
  /** CA certificates (PEM) trusted for verified MX sessions besides Node's roots. Unset: Node's store (with NODE_EXTRA_CA_CERTS). */
  extraCa?: string[];
}

/**
 * A connection slot of traffic shaping (src/delivery/shaping.ts): a lane of one connection,
 * reused while its target stays the same and replaced when it changes, so the connections to
 * a destination never outnumber its slots.
 */
export interface SlotVia {
  slot: string;
}

/** Connections to one target (or of one shaping slot), and the sends waiting for one. */
interface Lane {
  /** What the lane's connections talk to: host, port, source address and TLS mode, or the relay URL. */
  target: string;
  sessions: SmtpSession[];
  /** Each is handed a released connection, or null: the room of a discarded one, to open its own. */
  waiting: ((session: SmtpSession | null) => void)[];
  maxConnections: number;
  maxMessages: number;
  lastUsed: number;
}

/** At most this many connection attempts per message across a domain's MX hosts. */
const MAX_MX_ATTEMPTS = 5;

export class SmtpSender {
  private readonly lanes = new Map<string, Lane>();
  private readonly opts: Required<Omit<SmtpSenderOptions, 'extraCa'>> & Pick<SmtpSenderOptions, 'extraCa'>;
  private closed = false;

  constructor(opts: SmtpSenderOptions) {
    this.opts = {
      maxConnectionsPerHost: 3,
      maxMessagesPerConnection: 100,
      idleTimeoutMs: 5_000,
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
    const lane = this.lane(target, via);
    // A reused connection the server dropped before the message left: once more on a fresh one.
    for (let attempt = 0; ; attempt++) {
      // An idle connection (or room for one) is taken at once; only a full lane waits.
      const session = this.take(lane, target) ?? (await this.acquire(lane, target));
      if (session === null) return classifySmtpError(new Error('sender is closed'), mx);
      try {
        const { response } = await session.send(envelope.from, envelope.to, raw);
        return { kind: 'delivered', response, mx };
      } catch (caught) {
        const { error, retryable } = caught as SendFailure;
        if (retryable && attempt === 0 && !this.closed) continue;
        if (target.kind === 'mx' && target.tls === 'verified') {
          const failure = tlsFailureOf(error);
          if (failure) return tlsFailed(failure, mx);
        }
        return classifySmtpError(error, mx);
      } finally {
        this.release(lane, session);
      }
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

  /** Close every connection (shutdown, tests). */
  async close(): Promise<void> {
    this.closed = true;
    for (const lane of this.lanes.values()) {
      for (const s of lane.sessions) s.quit();
      for (const wake of lane.waiting.splice(0)) wake(null);
    }
    this.lanes.clear();
  }

  /**
   * Closes a slot's connection (its slot was taken back, or it carried its messagesPerConnection).
   * `onGone` is called when the server has answered its QUIT and the connection ended; not at
   * all when the slot had no connection up to say QUIT on (the caller's grace applies then).
   */
  closeSlot(slot: string, onGone?: () => void): void {
    const key = `slot:${slot}`;
    for (const s of this.lanes.get(key)?.sessions ?? []) s.quit(onGone);
    this.lanes.delete(key);
  }

  private lane(target: SmtpTarget, via?: SlotVia): Lane {
    // The source address and TLS mode are part of the target: a slot that changes either gets a new connection.
    const targetKey = target.kind === 'mx'
      ? `mx:${target.address ?? target.host}:${target.port}:${target.source?.address ?? ''}:${target.tls === 'verified' ? `verified:${target.host}` : ''}`
      : `relay:${target.url}`;
    const key = via ? `slot:${via.slot}` : targetKey;
    let lane = this.lanes.get(key);
    if (lane && lane.target !== targetKey) {
      for (const s of lane.sessions) s.quit();
      // Sends still waiting for the old target's connection are handed a fresh one of theirs.
      const waiting = lane.waiting;
      lane = { ...lane, target: targetKey, sessions: [], waiting };
      this.lanes.set(key, lane);
    }
    if (!lane) {
      // A slot's connection is closed by shaping (messagesPerConnection, a smaller grant), never by the lane itself.
      lane = via
        ? { target: targetKey, sessions: [], waiting: [], maxConnections: 1, maxMessages: Infinity, lastUsed: Date.now() }
        : { target: targetKey, sessions: [], waiting: [], maxConnections: this.opts.maxConnectionsPerHost, maxMessages: this.opts.maxMessagesPerConnection, lastUsed: Date.now() };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /**
   * An idle usable connection of the lane, or a new one while under its cap; null when the
   * lane is full (acquire waits then). Synchronous: the usual send finds its connection idle,
   * and waiting for nothing cost promises and a turn of the microtask queue per message.
   */
  private take(lane: Lane, target: SmtpTarget): SmtpSession | null {
    lane.sessions = lane.sessions.filter((s) => s.usable || s.busy);
    let session = lane.sessions.find((s) => !s.busy && s.usable) ?? null;
    if (!session) {
      if (lane.sessions.length >= lane.maxConnections) return null;
      session = this.connect(target);
      lane.sessions.push(session);
    }
    session.busy = true;
    return session;
  }

  /** The next connection released in a full lane (or the room of one that was discarded); null when the sender closed meanwhile. */
  private async acquire(lane: Lane, target: SmtpTarget): Promise<SmtpSession | null> {
    let session = await new Promise<SmtpSession | null>((resolve) => lane.waiting.push(resolve));
    // Closed while this send waited for a connection: it is not sent.
    if (this.closed) {
      session?.quit();
      return null;
    }
    // Handed the room of a connection that was discarded.
    if (!session) {
      session = this.connect(target);
      lane.sessions.push(session);
    }
    session.busy = true;
    return session;
  }

  /** Hands the connection (or, when it is spent or broken, its room) to the next waiting send, or lets it idle. */
  private release(lane: Lane, session: SmtpSession): void {
    session.busy = false;
    lane.lastUsed = Date.now();
    if (session.usable && session.messages >= lane.maxMessages) session.quit();
    if (!session.usable) lane.sessions = lane.sessions.filter((s) => s !== session);
    const next = lane.waiting.shift();
    if (next) {
      if (session.usable) session.busy = true;
      next(session.usable ? session : null);
      return;
    }
    if (session.usable) {
      session.idleFor(this.opts.idleTimeoutMs, () => {
        lane.sessions = lane.sessions.filter((s) => s !== session);
      });
    }
  }

  /** A new connection to `target`. */
  private connect(target: SmtpTarget): SmtpSession {
    const common: SessionOptions = {
      name: this.opts.heloName,
      connectionTimeout: this.opts.connectionTimeoutMs,
      greetingTimeout: this.opts.greetingTimeoutMs,
      socketTimeout: this.opts.socketTimeoutMs,
      logger: false,
    };
    if (target.kind === 'mx') return new SmtpSession({ ...common, ...mxOptions(target, this.opts.extraCa) });
    const { auth, ...relay } = parseConnectionUrl(target.url) as SessionOptions & { auth?: Partial<SessionAuth> };
    return new SmtpSession({ ...common, ...relay }, auth?.user ? { user: auth.user, pass: auth.pass ?? '' } : undefined);
  }

  /** Drop lanes that have had nothing to do for twice the idle timeout. */
  private sweepIdle(): void {
    const cutoff = Date.now() - 2 * this.opts.idleTimeoutMs;
    for (const [key, lane] of this.lanes) {
      if (lane.waiting.length === 0 && lane.sessions.every((s) => !s.busy) && lane.lastUsed < cutoff) {
        for (const s of lane.sessions) s.quit();
        this.lanes.delete(key);
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
