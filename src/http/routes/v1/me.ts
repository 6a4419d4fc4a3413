import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isSessionAuth } from '../../../domain/users/sessions.js';
import { requireAccount } from '../../../domain/accounts.js';
import { poolFor } from '../../../sending-identity.js';

const Me = Type.Object({
  account: Type.Object({ id: Type.String(), name: Type.String() }),
  key: Type.Union([
    Type.Object({ id: Type.String(), mode: Type.Union([Type.Literal('live'), Type.Literal('test')]), prefix: Type.String() }),
    Type.Null(),
  ], { description: 'The key used; null when a signed-in dashboard user (session cookie) asks' }),
  user: Type.Optional(Type.Object({ id: Type.String(), email: Type.String() }, { description: 'Present for a session: the signed-in person' })),
  pools: Type.Object({
    transactional: Type.String({ description: 'The pool API and automation mail leaves through' }),
    broadcast: Type.String({ description: 'The pool campaign mail leaves through' }),
  }, { description: 'The source pools of the delivery policy this account sends through (docs/sending-identity.md): the stream\'s own pool unless the operator assigned the account another one' }),
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
          examples: [{ account: { id: 'acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d', name: 'Acme' }, key: { id: 'key_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0e', mode: 'live', prefix: 'sk_live_Ab3dE9' }, pools: { transactional: 'transactional', broadcast: 'acme-dedicated' } }],
        },
      },
    },
  }, async (request) => {
    const { pools } = await requireAccount(app.deps.pool, request.auth.accountId);
    const identity = app.deps.config.deliveryPolicy.identity;
    return {
      account: { id: request.auth.accountId, name: request.auth.accountName },
      key: request.auth.keyId ? { id: request.auth.keyId, mode: request.auth.mode, prefix: request.auth.prefix ?? '' } : null,
      ...(isSessionAuth(request.auth) ? { user: { id: request.auth.userId, email: request.auth.email } } : {}),
      pools: { transactional: poolFor(identity, 'transactional', pools.transactional), broadcast: poolFor(identity, 'broadcast', pools.broadcast) },
    };
  });
}
