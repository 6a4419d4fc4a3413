import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isSessionAuth } from '../../../domain/users/sessions.js';

const Me = Type.Object({
  account: Type.Object({ id: Type.String(), name: Type.String() }),
  key: Type.Union([
    Type.Object({ id: Type.String(), mode: Type.Union([Type.Literal('live'), Type.Literal('test')]), prefix: Type.String() }),
    Type.Null(),
  ], { description: 'The key used; null when a signed-in dashboard user (session cookie) asks' }),
  user: Type.Optional(Type.Object({ id: Type.String(), email: Type.String() }, { description: 'Present for a session: the signed-in person' })),
});

export async function meRoutes(app: FastifyInstance): Promise<void> {
  app.get('/api/v1/me', {
    schema: {
      summary: 'Verify an API key',
      description: 'What connectors call to check a key: the account it belongs to and whether it is a live or test key.',
      operationId: 'getMe',
      tags: ['account'],
      response: {
        200: {
          ...Me,
          examples: [{ account: { id: 'acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d', name: 'Acme' }, key: { id: 'key_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0e', mode: 'live', prefix: 'sk_live_Ab3dE9' } }],
        },
      },
    },
  }, async (request) => ({
    account: { id: request.auth.accountId, name: request.auth.accountName },
    key: request.auth.keyId ? { id: request.auth.keyId, mode: request.auth.mode, prefix: request.auth.prefix ?? '' } : null,
    ...(isSessionAuth(request.auth) ? { user: { id: request.auth.userId, email: request.auth.email } } : {}),
  }));
}
