import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createApiKey, pageKeysOfAccount, requireApiKey, revokeKey } from '../../../domain/keys/api-keys.js';
import { ListQuery, listResponse, pageOf } from '../../pagination.js';
import { problemResponse } from '../../problem.js';
import { accountWrite, withSandbox } from '../../account-write.js';
import { SandboxFlag } from './common-schemas.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
const keyFields = {
  id: Type.String({ description: 'key_… identifier' }),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')], { description: '`live` (sk_live_…) acts for real; `test` (sk_test_…) validates and answers `sandbox: true`, changing nothing' }),
  name: Type.Union([Type.String(), Type.Null()], { description: 'A label' }),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it in lists' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Nullable(Type.String({ format: 'date-time', description: 'Last request with the key (updated at most once a minute)' })),
  revokedAt: Nullable(Type.String({ format: 'date-time', description: 'Set once revoked; a revoked key gets 401' })),
};
const ApiKeySchema = Type.Object({ ...keyFields, sandbox: SandboxFlag });
const CreatedKey = Type.Object({
  ...keyFields,
  key: Type.String({ description: 'The full key: shown only in this response, never again (only its hash is kept)' }),
  sandbox: SandboxFlag,
});
const ID = 'key_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0e';
const KEY_EXAMPLE = {
  id: ID, mode: 'live', name: 'production server', prefix: 'sk_live_Ab3dE9', createdAt: '2026-11-20T10:15:30.123Z',
  lastUsedAt: '2026-11-22T08:01:02.000Z', revokedAt: null,
};
const CreateBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]*$', description: 'A label, e.g. where the key is used; no control characters' })),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')], { default: 'live', description: '`test` makes a test key (sk_test_…)' }),
}, { additionalProperties: false, examples: [{ name: 'production server', mode: 'live' }, { name: 'CI', mode: 'test' }] });
const IdParams = Type.Object({ id: Type.String({ maxLength: 100, description: 'Key id (key_…)' }) });
const NotFound = problemResponse('No key with this id in this account', 'not_found', `key ${ID} not found`);

/** API keys of the account: "created in the account settings under API keys" (spec, Authentication 1). */
export async function keyRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;

  app.get('/api/v1/keys', {
    schema: {
      operationId: 'listApiKeys',
      summary: 'List API keys',
      description: 'The account\'s keys, revoked ones included, newest first by default; prefixes only (a key\'s secret is never shown again). Paginate with `limit`, `order` and `cursor`.',
      tags: ['keys'],
      querystring: ListQuery,
      response: { 200: { ...listResponse(ApiKeySchema), examples: [{ data: [KEY_EXAMPLE], nextCursor: null }] } },
    },
  }, async (request) => pageKeysOfAccount(pool, request.auth.accountId, pageOf(request.query)));

  app.post('/api/v1/keys', {
    schema: {
      operationId: 'createApiKey',
      summary: 'Create an API key',
      description: 'A live key, or a test key with `mode: "test"`. The full key is in this response only. Test key: validated, nothing stored, `sandbox: true` (the returned key does not work).',
      tags: ['keys'],
      body: CreateBody,
      response: { 201: { ...CreatedKey, examples: [{ ...KEY_EXAMPLE, lastUsedAt: null, key: 'sk_live_Ab3dE9Zm9yIGV4YW1wbGUgb25seTogbm90IGEgcmVhbCBrZXk' }] } },
    },
  }, async (request, reply) => {
    const { name, mode } = request.body;
    const r = await accountWrite(app, request, (db) => createApiKey(db, { accountId: request.auth.accountId, mode, name: name ?? null }));
    const { accountId: _account, ...key } = r.value;
    return reply.code(201).send(withSandbox({ value: key, sandbox: r.sandbox }));
  });

  app.get('/api/v1/keys/:id', {
    schema: {
      operationId: 'getApiKey',
      summary: 'Get an API key',
      description: 'One key of the account: prefix, mode, last use and revocation (never the secret).',
      tags: ['keys'],
      params: IdParams,
      response: { 200: { ...ApiKeySchema, examples: [KEY_EXAMPLE] }, 404: NotFound },
    },
  }, async (request) => {
    const { accountId: _account, ...key } = await requireApiKey(pool, request.auth.accountId, request.params.id);
    return key;
  });

  app.delete('/api/v1/keys/:id', {
    schema: {
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key',
      description: 'Requests with the key get 401 from now on (other API processes of a multi-process deployment stop accepting it within 5 seconds, the time they may trust a verified key). Revoking twice keeps the first time. A key may revoke itself. Test key: nothing changes, `sandbox: true`.',
      tags: ['keys'],
      params: IdParams,
      response: { 200: { ...ApiKeySchema, examples: [{ ...KEY_EXAMPLE, revokedAt: '2026-11-23T09:00:00.000Z' }] }, 404: NotFound },
    },
  }, async (request) => {
    const r = await accountWrite(app, request, (db) => revokeKey(db, request.params.id, clock.now(), request.auth.accountId));
    if (!r.sandbox) app.keyCache.forgetKey(r.value.id);
    const { accountId: _account, ...key } = r.value;
    return withSandbox({ value: key, sandbox: r.sandbox });
  });
}
