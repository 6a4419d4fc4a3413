/**
 * A real SMTP server (smtp-server) on 127.0.0.1, random port, standing in for a recipient's
 * MX or for a relay. Per-recipient behaviour comes from a rule function; every accepted
 * message is recorded with the exact bytes received, so tests verify what actually crossed
 * the wire (DKIM, headers), never what we meant to send.
 *
 * Replies are sent verbatim: smtp-server's automatic enhanced codes are off, so a rule's
 * text carries its own ("5.1.1 User unknown"), as real servers' do.
 */
import { SMTPServer } from 'smtp-server';
import type { SMTPServerSession } from 'smtp-server';

export type MxRule =
  | 'accept'
  | 'defer' // 451 4.3.0
  | 'reject' // 550 5.1.1
  | { code: number; message: string };

export interface ReceivedMessage {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  /** STARTTLS was used on the connection that carried it. */
  tls: boolean;
  /** smtp-server's connection id: equal ids mean one connection carried both. */
  connectionId: string;
  /** The address the client connected from (a source address, when sources are bound). */
  remoteAddress: string;
  /** The name the client gave in EHLO/HELO. */
  ehlo: string;
  /** MAIL FROM carried the SMTPUTF8 parameter (RFC 6531). smtp-server shows IDN domains decoded either way. */
  smtpUtf8: boolean;
}

export interface SmtpMxOptions {
  /** Offer STARTTLS (smtp-server's built-in self-signed localhost certificate). Default true. */
  starttls?: boolean;
  /** Decides each RCPT TO (a promise: the reply waits for it, for tests acting mid-attempt). Default: accept everyone. */
  rule?: (recipient: string, session: SMTPServerSession) => MxRule | Promise<MxRule>;
  /** Decides the greeting; a non-accept answer refuses the connection. Default: accept. */
  connectRule?: () => MxRule;
  /** Wait this long before answering each message's DATA (a slow MX). Default 0. */
  dataDelayMs?: number;
  /** Require AUTH with these credentials (relay tests). Default: no AUTH. */
  auth?: { user: string; pass: string };
  /** The loopback address to listen on. Default 127.0.0.1. */
  address?: string;
  /** The port; default any free one. Several MXs on different 127.0.0.x addresses may share one (delivery has a single MX port). */
  port?: number;
  /** The STARTTLS certificate (e.g. from test/helpers/test-ca.ts). Default: smtp-server's self-signed one. */
  tls?: { key: string; cert: string };
}

export interface TestSmtpMx {
  port: number;
  host: string;
  messages: ReceivedMessage[];
  /** The peer address of every connection, in order (counted at connect). */
  peers: string[];
  /** Connections accepted so far (counted at connect, before the greeting). */
  readonly connectionCount: number;
  setRule(rule: (recipient: string, session: SMTPServerSession) => MxRule | Promise<MxRule>): void;
  waitForMessages(n: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  close(): Promise<void>;
}

function ruleError(rule: Exclude<MxRule, 'accept'>): Error & { responseCode: number } {
  const [code, message] =
    rule === 'defer' ? [451, '4.3.0 Temporary failure, try again later']
    : rule === 'reject' ? [550, '5.1.1 User unknown']
    : [rule.code, rule.message];
  return Object.assign(new Error(message), { responseCode: code });
}

export async function startSmtpMx(opts: SmtpMxOptions = {}): Promise<TestSmtpMx> {
  const messages: ReceivedMessage[] = [];
  const waiters: (() => void)[] = [];
  let rule: NonNullable<SmtpMxOptions['rule']> = opts.rule ?? (() => 'accept' as MxRule);
  let connectionCount = 0;
  const peers: string[] = [];
  const starttls = opts.starttls ?? true;

  const server = new SMTPServer({
    name: 'mx.test',
    logger: false,
    hideENHANCEDSTATUSCODES: true,
    hideSTARTTLS: !starttls,
    disabledCommands: [...(starttls ? [] : ['STARTTLS']), ...(opts.auth ? [] : ['AUTH'])],
    authOptional: !opts.auth,
    allowInsecureAuth: true,
    closeTimeout: 500,
    ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : {}),
    onConnect(session, callback) {
      connectionCount++;
      peers.push(session.remoteAddress);
      const r = opts.connectRule?.() ?? 'accept';
      callback(r === 'accept' ? null : ruleError(r));
    },
    onAuth(auth, _session, callback) {
      if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) {
        return callback(null, { user: auth.username });
      }
      callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onRcptTo(address, session, callback) {
      void Promise.resolve(rule(address.address, session)).then((r) => callback(r === 'accept' ? null : ruleError(r)));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => void finish());
      const finish = async () => {
        if (opts.dataDelayMs) await new Promise((resolve) => setTimeout(resolve, opts.dataDelayMs));
        const mailFrom = session.envelope.mailFrom;
        messages.push({
          envelope: {
            from: mailFrom ? mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          },
          raw: Buffer.concat(chunks),
          tls: Boolean(session.secure),
          connectionId: session.id,
          remoteAddress: session.remoteAddress,
          ehlo: session.hostNameAppearsAs,
          smtpUtf8: Boolean((session.envelope as { smtpUtf8?: boolean }).smtpUtf8),
        });
        waiters.splice(0).forEach((wake) => wake());
        callback(null);
      };
    },
  });
  server.on('error', () => {}); // a client dropping mid-session is not a test failure

  const host = opts.address ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, host, resolve));
  const port = (server.server.address() as { port: number }).port;

  return {
    port,
    host,
    messages,
    peers,
    get connectionCount() {
      return connectionCount;
    },
    setRule(next) {
      rule = next;
    },
    async waitForMessages(n, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${n} messages at the test MX, got ${messages.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return messages.slice(0, n);
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
