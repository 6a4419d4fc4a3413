import { finishPage, keyset, pageOf } from '../../../db/pagination.js';
import { ListQuery } from '../../pagination.js';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { getCaptured, listCaptured } from '../../../db/queries/captured.js';
import { notFound } from '../../../errors.js';

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
export async function capturedRoutes(app: FastifyInstance): Promise<void> {
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
    const page = pageOf(request.query as ListQuery);
    const rows = await listCaptured(app.deps.pool, request.auth.accountId, { ...keyset(page, 'id', 2), limit: page.limit });
    const { data, nextCursor } = finishPage(rows, page, (r) => r.id);
    return {
      data: data.map((r) => ({ id: r.id, envelopeFrom: r.envelope_from, envelopeTo: r.envelope_to, subject: r.subject, capturedAt: r.captured_at.toISOString() })),
      nextCursor,
    };
  });

  app.get('/api/v1/captured/:id', {
    schema: {
      operationId: 'getCapturedMessage',
      summary: 'The raw RFC 5322 bytes of a captured message (message/rfc822)',
      tags: ['emails'],
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
      response: {
        200: { description: 'The message as it would have been sent, DKIM signature included', content: { 'message/rfc822': { schema: Type.String() } } },
      },
    },
  }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const row = await getCaptured(app.deps.pool, request.auth.accountId, id);
    if (!row) throw notFound(`captured message ${id}`);
    return reply.type('message/rfc822').send(row.raw);
  });
}
