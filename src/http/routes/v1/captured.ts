import { ListQuery, pageOf } from '../../pagination.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { capturedSource, listCapturedMessages } from '../../../domain/sending/captured.js';
import { notFound } from '../../../errors.js';

const RawParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const CapturedItem = Type.Object({
  id: Type.String({ description: 'The message id' }),
  envelopeFrom: Type.String(),
  envelopeTo: Type.String(),
  subject: Type.String(),
  capturedAt: Type.String(),
});

/**
 * POSTLINE_DELIVERY=capture keeps every outgoing message locally instead of sending it:
 * these routes show them (the safe development mode).
 */
export async function capturedRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/v1/captured', {
    schema: {
      operationId: 'listCapturedMessages',
      summary: 'List captured messages (POSTLINE_DELIVERY=capture)',
      tags: ['emails'],
      querystring: ListQuery,
      response: {
        200: Type.Object(
          { data: Type.Array(CapturedItem), nextCursor: Type.Union([Type.String(), Type.Null()]) },
          { examples: [{ data: [{ id: 'msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d', envelopeFrom: 'bounces+msg_019a…=a1b2c3d4e5f6@bounces.acme.com', envelopeTo: 'ada@example.com', subject: 'Welcome', capturedAt: '2026-11-20T10:15:30.123Z' }], nextCursor: null }] },
        ),
      },
    },
  }, async (request) => {
    return listCapturedMessages(app.deps.pool, request.auth.accountId, pageOf(request.query));
  });

  // The answer is bytes (message/rfc822), which the type provider would type as the schema's
  // string: the route is typed by its params schema alone.
  fastify.get<{ Params: Static<typeof RawParams> }>('/api/v1/captured/:id', {
    schema: {
      operationId: 'getCapturedMessage',
      summary: 'The raw RFC 5322 bytes of a captured message (message/rfc822)',
      tags: ['emails'],
      params: RawParams,
      response: {
        200: { description: 'The message as it would have been sent, DKIM signature included', content: { 'message/rfc822': { schema: Type.String() } } },
      },
    },
  }, async (request, reply) => {
    const { id } = request.params;
    const raw = await capturedSource(app.deps.pool, request.auth.accountId, id);
    if (!raw) throw notFound(`captured message ${id}`);
    return reply.type('message/rfc822').send(raw);
  });
}
