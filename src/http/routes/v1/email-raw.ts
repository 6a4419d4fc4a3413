import type { FastifyInstance } from 'fastify';
import { createSecretKey } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { CampaignRenderer } from '../../../domain/campaigns/content.js';
import { bounceDomainFor } from '../../../domain/domains/name.js';
import { loadSigningKeys } from '../../../domain/domains/domains.js';
import { messageWithCapture } from '../../../domain/sending/captured.js';
import { buildMessage } from '../../../domain/sending/message-build.js';
import { TrackingLinks } from '../../../domain/tracking/links.js';
import { AppError, notFound } from '../../../errors.js';
import { deriveKey } from '../../../mail/keyring.js';

/**
 * The raw RFC 5322 source of a message (docs/decisions/0017-raw-message-source.md).
 *
 * A captured message (POSTLINE_DELIVERY=capture) is answered with the bytes kept at send time:
 * exactly what would have left. Any other message is rebuilt from its stored content through
 * the delivery engine's own steps (campaign rendering, link tracking, footer, List-Unsubscribe,
 * composition, DKIM signing with the domain's current keys). Message-ID, headers, parts and
 * tracked links are the sent ones; the MIME boundaries, the Date (the recorded attempt time,
 * to the second) and therefore the DKIM signature values are the rebuild's, so the answer says
 * which it is in `Postline-Source` and never claims to be the copy that was sent.
 */
const RawParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export async function emailRawRoutes(app: FastifyInstance): Promise<void> {
  const links = new TrackingLinks(app.deps.config);
  const campaigns = new CampaignRenderer(app.deps.pool, links);
  const verpKey = createSecretKey(deriveKey(app.deps.config.secret, 'verp'));

  // The answer is bytes (message/rfc822), which the type provider would type as the schema's
  // string: the route is typed by its params schema alone.
  app.get<{ Params: Static<typeof RawParams> }>('/api/v1/emails/:id/raw', {
    schema: {
      operationId: 'getEmailRawSource',
      summary: 'The raw RFC 5322 source of an email (message/rfc822)',
      description:
        'Captured mail (POSTLINE_DELIVERY=capture) is answered with the exact bytes kept at send time (`Postline-Source: captured`). ' +
        'Other messages are rebuilt from the stored content through the same build path as delivery (`Postline-Source: rebuilt`): ' +
        'the Message-ID, headers, parts and tracked links are the ones sent; MIME boundaries, Date and the DKIM signature values belong to the rebuild. ' +
        'Any recipient id of a send answers that recipient\'s copy (its own tracking and unsubscribe links, the send\'s To and Cc headers).',
      tags: ['emails'],
      params: RawParams,
      response: {
        200: {
          description: 'The message source',
          headers: {
            'Postline-Source': { type: 'string', enum: ['captured', 'rebuilt'], description: '`captured`: the bytes as they would have left; `rebuilt`: rebuilt from stored content' },
          },
          content: { 'message/rfc822': { schema: Type.String(), example: 'Message-ID: <msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d@acme.com>\r\nFrom: Acme <hello@acme.com>\r\nTo: ada@example.com\r\nSubject: Welcome\r\n…' } },
        },
      },
    },
  }, async (request, reply) => {
    const { id } = request.params;
    const { pool, config } = app.deps;
    const found = await messageWithCapture(pool, request.auth.accountId, id);
    if (!found) throw notFound(`email ${id}`);
    const { message: msg, captured } = found;
    if (captured) return reply.type('message/rfc822').header('postline-source', 'captured').send(captured.raw);
    if (!msg.domain_id) throw new AppError('invalid_state', `the sending domain of email ${id} was deleted, so its source cannot be rebuilt`);
    const signing = await loadSigningKeys(pool, msg.domain_id, config.secret);
    // The attempt time the engine recorded stands in for the build time it used (same second
    // for an attempt that took less than one); a message never attempted is built as of now.
    const at = msg.delivered_at ?? msg.first_attempt_at ?? app.deps.clock.now();
    const content = await campaigns.render(msg, signing.domain, signing.trackingHost);
    const built = await buildMessage(content, signing, links, { bounceDomain: bounceDomainFor(signing.domain), verpKey, now: at });
    return reply.type('message/rfc822').header('postline-source', 'rebuilt').send(built.raw);
  });
}
