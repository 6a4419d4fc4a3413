import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { processArf } from '../../domain/bounces/complaints.js';
import { AppError } from '../../errors.js';
import { deriveKey } from '../../mail/keyring.js';
import { problemResponse } from '../problem.js';

/** The report with its original (attachments and all): the same limit as the SMTP listener. */
export const FBL_BODY_LIMIT = 10 * 1024 * 1024;

/** Types feedback-loop forwarders post ARF with; anything else is read as raw bytes too. */
const RAW_TYPES = ['message/rfc822', 'message/feedback-report', 'multipart/report', 'text/plain', 'application/octet-stream'];

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * The one key presented, or undefined. This route validates nothing by schema, so `?key=a&key=b`
 * arrives as an array: a key given twice (or not as text) is no key, hence 401, never a 500.
 */
function presentedKey(request: FastifyRequest<{ Querystring: { key?: unknown } }>): string | undefined {
  const header = request.headers['x-fbl-key'];
  const key: unknown = header ?? request.query.key;
  return typeof key === 'string' ? key : undefined;
}

const Result = Type.Object({
  matched: Type.Boolean({ description: 'Whether the report was tied to one of our messages' }),
  messageId: Type.Union([Type.String(), Type.Null()], { description: 'The message complained about (msg_…), null when unmatched' }),
  email: Type.Union([Type.String(), Type.Null()], { description: 'The complaining address (now suppressed when matched); when unmatched, the reported address, if any' }),
});


/**
 * Complaint intake (docs/architecture.md#complaints-and-bounces-coming-back, docs/complaints-and-bounces.md): `POST /api/fbl/inbound`,
 * no version segment (spec, Versioning), no API key: the FBL key instead, in `X-FBL-Key` or
 * `?key=`. The body is the raw report, so this scope reads every content type as bytes (the
 * app itself parses JSON only). The key is checked at onRequest, before a 10 MB body is read.
 */
export async function fblRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock, config } = app.deps;
  const expected = sha256(config.fblSecret);
  const verpKey = deriveKey(config.secret, 'verp');

  app.removeAllContentTypeParsers();
  for (const type of [...RAW_TYPES, '*']) {
    app.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: FBL_BODY_LIMIT }, (_request, body, done) => done(null, body));
  }

  app.post<{ Querystring: { key?: unknown } }>('/api/fbl/inbound', {
    config: { public: true },
    bodyLimit: FBL_BODY_LIMIT,
    // The request log line carries the URL, and `?key=` is a secret: log this route at warn.
    logLevel: 'warn',
    // Nothing here is JSON: the schemas below document the raw body, the key and the answers;
    // the handler checks the key and the report itself.
    validatorCompiler: () => () => true,
    schema: {
      operationId: 'reportComplaint',
      summary: 'Report a complaint (ARF feedback report)',
      description:
        'Feedback-loop intake. The body is the raw ARF report (RFC 5965): a `multipart/report` with a `message/feedback-report` part and the original as `message/rfc822` or `text/rfc822-headers`, posted as is (any content type, up to 10 MB). ' +
        'The key (`postline fbl-secret`) goes in `X-FBL-Key` or `?key=`, not the API key. The report is matched to the message by the original\'s Message-ID, else by a signed VERP Original-Mail-From, else by the reported address (Original-Rcpt-To, else the original\'s To) → the most recent message to it. ' +
        'Matched: the address is suppressed (reason complaint) and a `spam` event recorded, once per message. Every report is stored, matched or not.',
      tags: ['complaints'],
      security: [{ fblKey: [] }, { fblKeyQuery: [] }],
      consumes: [...RAW_TYPES],
      headers: Type.Object({ 'x-fbl-key': Type.Optional(Type.String({ description: 'The FBL key (or use ?key=)' })) }),
      querystring: Type.Object({ key: Type.Optional(Type.String({ description: 'The FBL key, when the sender cannot set a header' })) }),
      body: Type.String({
        description: 'The raw ARF message',
        examples: ['From: <fbl@isp.example>\r\nTo: <fbl@bounces.example.com>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=feedback-report; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nAn abuse report.\r\n--b\r\nContent-Type: message/feedback-report\r\n\r\nFeedback-Type: abuse\r\nUser-Agent: SomeGenerator/1.0\r\nVersion: 1\r\nOriginal-Rcpt-To: <jane@example.net>\r\n\r\n--b\r\nContent-Type: text/rfc822-headers\r\n\r\nFrom: Acme <news@acme.example>\r\nTo: jane@example.net\r\nSubject: Hello\r\nMessage-ID: <msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10@acme.example>\r\n\r\n--b--\r\n'],
      }),
      response: {
        202: {
          ...Result,
          description: 'Report accepted and stored; `matched` says whether it was tied to a message',
          examples: [
            { matched: true, messageId: 'msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10', email: 'jane@example.net' },
            { matched: false, messageId: null, email: 'someone@example.org' },
          ],
        },
        400: problemResponse('The body is not an ARF report; it is stored anyway', 'invalid_report', 'not_multipart_report: Content-Type is text/plain, not multipart/report'),
        401: problemResponse('Missing or wrong FBL key', 'unauthorized', 'Missing or wrong FBL key (X-FBL-Key header or key query parameter)'),
        413: problemResponse('Body over 10 MB', 'payload_too_large', `Request body exceeds the limit of ${FBL_BODY_LIMIT} bytes`),
      },
    },
    onRequest: async (request) => {
      const key = presentedKey(request);
      // Hashing both sides gives equal lengths, so the comparison time says nothing about the key.
      if (key === undefined || !timingSafeEqual(sha256(key), expected)) {
        throw new AppError('unauthorized', 'Missing or wrong FBL key (X-FBL-Key header or key query parameter)');
      }
    },
  }, async (request, reply) => {
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const outcome = await processArf(pool, raw, 'http', clock.now(), { verpKey });
    if (!outcome.ok) throw new AppError('invalid_report', `${outcome.reason}: ${outcome.detail}`, { extra: { reportId: outcome.reportId } });
    return reply.code(202).send({ matched: outcome.matched, messageId: outcome.messageId, email: outcome.email });
  });
}
