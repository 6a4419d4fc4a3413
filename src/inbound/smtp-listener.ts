import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import { inboundRecipientKind, processInboundMail } from '../domain/bounces/intake.js';
import { deriveKey } from '../mail/keyring.js';

/** Same as the HTTP intake's limit: DSNs and ARF reports carry the original, attachments and all. */
export const INBOUND_SIZE_LIMIT = 10 * 1024 * 1024;

export interface SmtpListener {
  port: number;
  close(): Promise<void>;
}

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

function readAll(stream: SMTPServerDataStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/**
 * The inbound MX for bounce domains (`bounces.<domain>`, whose MX points here) and fbl@
 * (docs/architecture.md#complaints-and-bounces-coming-back, docs/complaints-and-bounces.md). Only what we can use is accepted: at RCPT
 * time a VERP address whose tag verifies, or fbl@ any domain; everything else gets 550 then,
 * so we never accept mail we would have to bounce (backscatter). No AUTH: senders are other
 * MTAs. STARTTLS is offered with smtp-server's built-in certificate (senders encrypt
 * opportunistically and do not verify it). The reply to DATA comes after the effects are
 * committed: 250 means stored, 451 means nothing was and the sender should retry.
 */
export async function startSmtpListener(deps: { config: Config; pool: Pool; clock: Clock; log: Logger }, opts: { host?: string } = {}): Promise<SmtpListener> {
  const { config, pool, clock, log } = deps;
  const verpKey = deriveKey(config.secret, 'verp');
  const server = new SMTPServer({
    name: new URL(config.baseUrl).hostname,
    banner: 'Postline inbound',
    logger: false,
    size: INBOUND_SIZE_LIMIT,
    authOptional: true,
    disabledCommands: ['AUTH'],
    disableReverseLookup: true,
    closeTimeout: 10_000, // on shutdown, sessions in progress get this long to finish
    hideENHANCEDSTATUSCODES: true, // our replies carry their own enhanced codes
    onRcptTo(address, _session, callback) {
      if (inboundRecipientKind(address.address, verpKey)) return callback();
      callback(smtpError(550, `5.1.1 <${address.address}>: Recipient address rejected: no such mailbox here`));
    },
    onData(stream, session, callback) {
      readAll(stream).then(
        async (raw) => {
          if (stream.sizeExceeded) return callback(); // smtp-server answers 552 itself
          const envelopeTo = session.envelope.rcptTo.map((r) => r.address);
          const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          try {
            const outcomes = await processInboundMail(pool, { envelopeTo, envelopeFrom, raw }, clock.now(), { verpKey });
            log.info({ from: envelopeFrom, to: envelopeTo, bytes: raw.length, outcomes: outcomes.map(summary) }, 'inbound mail processed');
            callback();
          } catch (err) {
            log.error({ err, to: envelopeTo }, 'inbound mail failed; answered 451');
            callback(smtpError(451, '4.3.0 Temporary failure processing the message, try again later'));
          }
        },
        (err: Error) => callback(smtpError(451, `4.3.0 ${err.message}`)),
      );
    },
  });
  server.on('error', (err) => log.warn({ err }, 'inbound smtp connection error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(config.smtpPort, opts.host ?? config.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  log.info({ port }, 'inbound smtp listening');
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function summary(o: Awaited<ReturnType<typeof processInboundMail>>[number]): Record<string, unknown> {
  if (o.kind === 'complaint') {
    const c = o.complaint;
    return { kind: o.kind, reportId: c.reportId, matched: c.ok && c.matched, messageId: c.ok ? c.messageId : null };
  }
  return { kind: o.kind, messageId: o.messageId, events: o.eventIds.length };
}
