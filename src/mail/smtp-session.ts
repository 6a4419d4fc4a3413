/**
 * One outbound SMTP connection, reused for many messages: nodemailer's `SMTPConnection` (the
 * protocol: greeting, EHLO, STARTTLS, AUTH, the envelope pipelined per RFC 2920 when the
 * server offers PIPELINING, the DATA stream, replies) driven directly, without its Mailer and
 * pool, whose per-message work (a mail object, a message stream pipeline, plugin hooks) cost
 * more than the protocol itself (docs/decisions/0039-hot-path-smtp-and-composition.md). The
 * message reaches that stream already in wire form (smtp-data/: dot-stuffed, terminated), so
 * nodemailer's per-byte stuffing does not run (docs/decisions/0044-smtp-data-in-wire-form.md).
 *
 * Rules kept here, the same as nodemailer's pool kept them: a transaction the server refused
 * (an envelope or data reply, not 421) is followed by RSET and the connection stays usable;
 * any other error discards the connection, never to be reused; a send on a connection that had
 * carried messages before and failed before a byte of the message left may be tried again on
 * a fresh connection (the server may have closed an idle session under us).
 */
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Writable } from 'node:stream';
import { writeMessageData, type DataPath } from './smtp-data/hand-over.js';

export type SessionOptions = ConstructorParameters<typeof SMTPConnection>[0];

/** Credentials for AUTH (relay mode); used when the server offers AUTH. */
export interface SessionAuth {
  user: string;
  pass: string;
}

/** An error from the connection, with nodemailer's structured facts (code, responseCode, command). */
export type SessionError = Error & { code?: string; responseCode?: number; response?: string; command?: string };

export interface SendOutcome {
  /** The server's final reply to the message. */
  response: string;
  /** Who put the message in wire form (smtp-data/hand-over.ts): ours, unless nodemailer changed. */
  dataPath: DataPath;
}

/** A send that failed; `retryable` when nothing of the message was written on a reused connection. */
export interface SendFailure {
  error: SessionError;
  retryable: boolean;
}

/** Replies that refuse the transaction but leave the session usable: RSET and carry on. */
const TRANSACTION_REFUSED = new Set(['EENVELOPE', 'EMESSAGE']);

export class SmtpSession {
  private readonly connection: SMTPConnection;
  private opened: Promise<void> | null = null;
  /** The opening succeeded: sends skip it. */
  private ready = false;
  private dead = false;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Fails the send in flight, if any (see discard). */
  private abandon: (() => void) | null = null;
  /** Fails an opening under way (see discard). */
  private abandonOpen: (() => void) | null = null;
  /** Messages this connection carried (accepted or refused). */
  messages = 0;
  busy = false;

  constructor(
    options: SessionOptions,
    private readonly auth?: SessionAuth,
  ) {
    this.connection = new SMTPConnection(options);
    // Errors of a send reach its callback too; an error with nothing in flight (the server
    // dropped an idle session) only ends the connection. Without a listener it would throw.
    this.connection.on('error', () => {
      this.dead = true;
    });
    this.connection.once('end', () => {
      this.dead = true;
      this.clearIdle();
    });
  }

  /** False once the connection failed, ended or was closed: a new one is needed. */
  get usable(): boolean {
    return !this.dead;
  }

  /** Connects, greets (EHLO, STARTTLS as configured) and authenticates; once. */
  open(): Promise<void> {
    this.opened ??= new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        this.abandonOpen = null;
        this.discard();
        reject(err);
      };
      // Before the session is up, errors arrive as events (a refusing greeting, TLS, DNS);
      // closing it ourselves meanwhile fails the opening too (see discard).
      this.connection.once('error', fail);
      this.abandonOpen = () => fail(Object.assign(new Error('Connection closed by the sender'), { code: 'ECONNECTION' }));
      this.connection.connect((err?: Error | null) => {
        if (err) return fail(err);
        const done = () => {
          if (settled) return;
          settled = true;
          this.ready = true;
          this.abandonOpen = null;
          this.connection.removeListener('error', fail);
          resolve();
        };
        if (!this.auth || !this.connection.allowsAuth) return done();
        this.connection.login({ user: this.auth.user, credentials: { user: this.auth.user, pass: this.auth.pass } }, (loginErr) => (loginErr ? fail(loginErr) : done()));
      });
    });
    return this.opened;
  }

  /**
   * One transaction: MAIL FROM, RCPT TO, DATA with `raw` (pipelined when offered). Resolves
   * with the final reply, or rejects with a SendFailure; the session is ready for the next
   * message, or discarded, by the time it settles.
   */
  async send(from: string, to: string, raw: Buffer): Promise<SendOutcome> {
    this.clearIdle();
    const reused = this.messages > 0;
    // Opened once; a reused connection goes straight to the transaction (awaiting the settled
    // opening cost two promises and a turn of the microtask queue per message).
    if (!this.ready) {
      await this.open().catch((error: SessionError) => {
        throw { error, retryable: false } satisfies SendFailure;
      });
    }
    let written = false;
    let dataPath: DataPath = 'nodemailer';
    // SMTPConnection pipes a message with a pipe() into its DATA stream once DATA is accepted:
    // this one hands it the whole message in wire form, already dot-stuffed and terminated
    // (docs/decisions/0044-smtp-data-in-wire-form.md), and says that the message started to leave.
    const message = {
      pipe: (stream: Writable) => {
        written = true;
        dataPath = writeMessageData(stream, raw);
      },
    };
    this.messages++;
    return new Promise<SendOutcome>((resolve, reject) => {
      // SMTPConnection.close() forgets a send in flight: closing one ourselves settles it here.
      this.abandon = () => reject({ error: Object.assign(new Error('Connection closed by the sender'), { code: 'ECONNECTION' }), retryable: false } satisfies SendFailure);
      this.connection.send({ from, to: [to] }, message as unknown as Buffer, (err, info) => {
        this.abandon = null;
        if (!err) return resolve({ response: String(info.response ?? '250 OK').trim(), dataPath });
        const error = err as SessionError;
        if (TRANSACTION_REFUSED.has(error.code ?? '') && error.responseCode !== 421 && this.usable) {
          // The server refused this message, the connection is fine: reset the transaction.
          this.connection.reset((resetErr) => {
            if (resetErr) this.discard();
            reject({ error, retryable: false } satisfies SendFailure);
          });
          return;
        }
        this.discard();
        reject({ error, retryable: reused && !written && isTransient(error) } satisfies SendFailure);
      });
    });
  }

  /** Closes the connection after `ms` without a message (QUIT). */
  idleFor(ms: number, onClosed: () => void): void {
    this.clearIdle();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      this.quit();
      onClosed();
    }, ms);
    this.idleTimer.unref();
  }

  /**
   * Says goodbye (QUIT) if the session is up; the connection is not used again. `onGone` is
   * called once the server answered the QUIT and the connection ended: the server has seen it
   * go. Never for a connection dropped without a QUIT (not up yet, busy, or already ended).
   */
  quit(onGone?: () => void): void {
    this.clearIdle();
    if (this.dead) return;
    if (this.opened && !this.busy && !this.abandon && !this.abandonOpen) {
      this.dead = true;
      try {
        this.connection.quit();
        if (onGone) this.connection.once('end', onGone);
        return;
      } catch {
        /* the socket is gone: close below */
      }
    }
    this.discard();
  }

  /** Drops the connection at once; it is never reused. A send in flight fails. */
  discard(): void {
    this.clearIdle();
    this.dead = true;
    this.connection.close();
    const abandon = this.abandon ?? this.abandonOpen;
    this.abandon = null;
    this.abandonOpen = null;
    abandon?.();
  }

  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}

/**
 * The connection went away without a reply (dropped, reset): a reply, even 421, is the
 * server's word about this attempt and is never retried behind its back.
 */
function isTransient(err: SessionError): boolean {
  return ['ECONNECTION', 'ESOCKET'].includes(err.code ?? '') && !err.responseCode;
}
