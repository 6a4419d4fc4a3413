import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseMail } from '../mail/parse-mail.js';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Clock } from '../clock.js';
import { isLoopbackHost, type Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import { rateBucket, RATE_WINDOW_MS, rateWindowStart, verifyApiKey } from '../domain/keys/api-keys.js';
import { VerifiedKeyCache } from '../domain/keys/key-cache.js';
import { RequestWrites } from '../domain/request-writes.js';
import { SendPipeline, type Sender } from '../domain/sending/send-pipeline.js';
import { AppError } from '../errors.js';
import { claimMessageId } from './message-id-dedup.js';
import { asSmtpError, replyFor } from './smtp-replies.js';
import { MAX_SUBMISSION_RECIPIENTS, toSendRequest } from './submitted-message.js';

export interface SubmissionListeners {
  /** The ports listened on (port 0 in the config gets a free one), undefined where off. */
  port: number | undefined;
  tlsPort: number | undefined;
  close(): Promise<void>;
}

interface Deps {
  config: Config;
  pool: Pool;
  /** For API-key lookups and rate counts, whose commits need no WAL flush (as the API's); defaults to pool. */
  relaxedPool?: Pool;
  clock: Clock;
  log: Logger;
}

/** What accepting a message needs besides the listener's deps: the send pipeline and the rate counter of every connection. */
type AcceptDeps = Deps & { pipeline: SendPipeline; counter: RequestWrites };

/** Reads the message, at most `limit` bytes of it kept: past that only the size matters. */
function readAll(stream: SMTPServerDataStream, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes <= limit) chunks.push(c);
    });
    stream.on('end', () => resolve(bytes > limit ? null : Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

function senderOf(session: SMTPServerSession): Sender {
  return session.user as unknown as Sender;
}

/**
 * What happens to one submitted message once its data is in, in the order an API send meets
 * them: the rate limit (a message is one request) and the Message-ID seen in the last 24 h
 * (then it is answered as accepted again and not sent twice) — asked together, one round trip
 * instead of two —, then the send pipeline itself. Returns the text of the 250 reply; throws
 * AppError for every refusal.
 */
async function acceptSubmission(deps: AcceptDeps, sender: Sender, raw: Buffer, envelopeTo: string[]): Promise<string> {
  const now = deps.clock.now();
  const mail = await parseMail(raw, { skipHtmlToText: true, skipTextLinks: true, skipTextToHtml: true, skipImageLinks: true });
  const [windowCount, seen] = await Promise.all([
    deps.counter.count(rateBucket(sender.accountId, sender.mode), rateWindowStart(now)),
    mail.messageId ? claimMessageId(deps.pool, { ...sender, messageId: mail.messageId, now, leaseMs: deps.config.idempotencyLeaseMs }) : null,
  ]);
  const limit = deps.config.rateLimits[sender.mode];
  if (windowCount > limit) {
    if (seen?.state === 'new') await seen.release();
    const retryAfter = Math.max(1, Math.ceil((rateWindowStart(now).getTime() + RATE_WINDOW_MS - now.getTime()) / 1000));
    throw new AppError('rate_limited', `Rate limit of ${limit} messages per minute exceeded for this account's ${sender.mode} keys`, { retryAfter });
  }
  if (seen?.state === 'accepted') return `2.0.0 Ok: already accepted as ${seen.acceptedId} (same Message-ID within 24 h: not sent again)`;
  if (seen?.state === 'in_flight') throw new AppError('conflict', 'A message with this Message-ID is being accepted on another connection; try again');
  try {
    const result = await deps.pipeline.send(sender, toSendRequest(mail, envelopeTo), seen?.state === 'new' ? seen.claim : undefined);
    await seen?.complete(result.id);
    return result.sandbox ? `2.0.0 Ok: sandbox ${result.id} (test key: checked, nothing sent)` : `2.0.0 Ok: ${result.status} as ${result.id}`;
  } catch (err) {
    await seen?.release();
    throw err;
  }
}

/**
 * One submission server (`secure`: TLS from the start, else STARTTLS): AUTH with an API key as
 * the password, SIZE and the recipient count checked as the envelope comes, each message's
 * data handed to acceptSubmission and its answer (or refusal) sent as the SMTP reply.
 */
function submissionServer(accept: AcceptDeps, keyCache: VerifiedKeyCache, tls: { cert: Buffer; key: Buffer }, secure: boolean): SMTPServer {
  const { config, pool, clock, log } = accept;
  const sizeLimit = config.bodyLimit;
  const smtp = new SMTPServer({
    ...tls,
    secure,
    name: new URL(config.baseUrl).hostname,
    banner: 'Postline submission',
    logger: false,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: config.submission.allowInsecureAuth && isLoopbackHost(config.host),
    // SIZE is advertised without a figure and checked here, so an oversized message gets our
    // 552 5.3.4 (smtp-server's own refusal has no enhanced status code).
    size: sizeLimit,
    hideSize: true,
    disableReverseLookup: true,
    closeTimeout: 10_000,
    hideENHANCEDSTATUSCODES: true, // our replies carry their own enhanced codes
    authRequiredMessage: '5.7.0 Authentication required: AUTH with user "api" and an API key as the password',
    onAuth(auth, _session, callback) {
      // The user name is free ("api" by convention); the password is the API key.
      verifyApiKey(accept.relaxedPool ?? pool, auth.password ?? undefined, clock.now(), keyCache).then(
        (ctx) => callback(null, { user: { accountId: ctx.accountId, mode: ctx.mode, monthlyQuota: ctx.monthlyQuota } satisfies Sender }),
        (err: unknown) => callback(asSmtpError(err instanceof AppError && err.code === 'unauthorized'
          ? { code: 535, text: '5.7.8 Authentication credentials invalid: the password must be a live or test API key' }
          : replyFor(err))),
      );
    },
    onMailFrom(address, _session, callback) {
      const declared = Number((address.args as Record<string, string> | false || {}).SIZE ?? 0);
      if (declared > sizeLimit) return callback(asSmtpError({ code: 552, text: `5.3.4 Message too large: at most ${sizeLimit} bytes` }));
      callback();
    },
    onRcptTo(_address, session, callback) {
      if (session.envelope.rcptTo.length >= MAX_SUBMISSION_RECIPIENTS) {
        return callback(asSmtpError({ code: 452, text: `4.5.3 Too many recipients: at most ${MAX_SUBMISSION_RECIPIENTS} per message, send the rest in another` }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const envelopeTo = session.envelope.rcptTo.map((r) => r.address);
      readAll(stream, sizeLimit)
        .then(async (raw) => {
          if (raw === null) throw new AppError('payload_too_large', `Message too large: at most ${sizeLimit} bytes`);
          return acceptSubmission(accept, senderOf(session), raw, envelopeTo);
        })
        .then(
          (text) => callback(null, text),
          (err: unknown) => {
            if (!(err instanceof AppError)) log.error({ err, to: envelopeTo }, 'submission failed; answered 451');
            callback(asSmtpError(replyFor(err)));
          },
        );
    },
  });
  smtp.on('error', (err) => log.warn({ err }, 'submission connection error'));
  return smtp;
}

/** Listens on `port` of `host` (0: a free one); resolves to the port taken. */
async function listenOn(smtp: SMTPServer, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    smtp.server.once('error', reject);
    smtp.listen(port, host, () => {
      smtp.server.off('error', reject);
      resolve();
    });
  });
  return (smtp.server.address() as AddressInfo).port;
}

/**
 * SMTP submission (docs/submission.md): applications that speak SMTP (frameworks, CMSs,
 * printers) send through Postline with an API key as the password. Port POSTLINE_SUBMISSION_PORT
 * takes STARTTLS, POSTLINE_SUBMISSIONS_PORT TLS from the start; AUTH PLAIN or LOGIN only once
 * the connection is encrypted (unless allowed on a loopback HOST, for development). Each
 * message goes through the same SendPipeline as POST /api/v1/emails; every refusal is an SMTP
 * reply with an enhanced status code (smtp-replies.ts), never a dropped connection.
 */
export async function startSubmissionListeners(deps: Deps): Promise<SubmissionListeners> {
  const { config, pool, clock, log } = deps;
  const { port, tlsPort, tlsCert, tlsKey } = config.submission;
  if (port === undefined && tlsPort === undefined) return { port: undefined, tlsPort: undefined, close: async () => {} };
  const tls = { cert: readFileSync(tlsCert!), key: readFileSync(tlsKey!) };
  const keyCache = new VerifiedKeyCache(clock);
  // The messages' rate counts and their rows share the listener's round trips, as the API's do.
  const counter = new RequestWrites({ pool, relaxedPool: deps.relaxedPool });
  const accept: AcceptDeps = { ...deps, pipeline: new SendPipeline({ pool, config, clock, writes: counter }), counter };
  const servers: SMTPServer[] = [];
  const started: { port?: number; tlsPort?: number } = {};
  if (port !== undefined) {
    const smtp = submissionServer(accept, keyCache, tls, false);
    servers.push(smtp);
    started.port = await listenOn(smtp, port, config.host);
  }
  if (tlsPort !== undefined) {
    const smtp = submissionServer(accept, keyCache, tls, true);
    servers.push(smtp);
    started.tlsPort = await listenOn(smtp, tlsPort, config.host);
  }
  log.info(started, 'smtp submission listening');
  return {
    port: started.port,
    tlsPort: started.tlsPort,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
