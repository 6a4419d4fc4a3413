import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { isSessionAuth } from '../../../domain/users/sessions.js';
import { changeUser, createUser, removeUser, requireUser, usersOfAccount } from '../../../domain/users/users.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../../domain/users/passwords.js';
import { ListQuery, listResponse, pageOf } from '../../pagination.js';
import { problemResponse } from '../../problem.js';
import { accountWrite, withSandbox } from '../../account-write.js';
import { SandboxFlag } from './common-schemas.js';

export const UserSchema = Type.Object({
  id: Type.String({ description: 'usr_… identifier' }),
  accountId: Type.String(),
  email: Type.String({ description: 'Signs in with this address' }),
  hasPassword: Type.Boolean({ description: 'false until a password is set (a user made at first start signs in with a one-time link)' }),
  createdAt: Type.String({ format: 'date-time' }),
  passwordSetAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  sandbox: SandboxFlag,
});
const ID = 'usr_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0f';
export const USER_EXAMPLE = {
  id: ID, accountId: 'acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d', email: 'ada@example.com', hasPassword: true,
  createdAt: '2026-11-20T10:15:30.123Z', passwordSetAt: '2026-11-20T10:15:30.123Z',
};
const Password = Type.String({ minLength: 1, maxLength: 4096, description: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters; stored as an argon2id hash` });
const CreateBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }), password: Password }, {
  additionalProperties: false, examples: [{ email: 'grace@example.com', password: 'correct horse battery staple' }],
});
const UpdateBody = Type.Object({ email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })), password: Type.Optional(Password) }, {
  additionalProperties: false, minProperties: 1, examples: [{ password: 'a new long passphrase' }, { email: 'ada@acme.example' }],
});
const IdParams = Type.Object({ id: Type.String({ maxLength: 100, description: 'User id (usr_…)' }) });
const NotFound = problemResponse('No user with this id in this account', 'not_found', `user ${ID} not found`);
const Conflict = problemResponse('The email is taken, or you tried to delete yourself', 'conflict', 'a user with the email grace@example.com already exists');

/** The people who may sign in to the dashboard for this account (docs/dashboard.md). */
export async function userRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;

  app.get('/api/v1/users', {
    schema: {
      operationId: 'listUsers',
      summary: 'List users',
      description: 'The people who can sign in to the dashboard for this account, newest first by default; paginate with `limit`, `order` and `cursor`.',
      tags: ['users'],
      querystring: ListQuery,
      response: { 200: { ...listResponse(UserSchema), examples: [{ data: [USER_EXAMPLE], nextCursor: null }] } },
    },
  }, async (request) => usersOfAccount(pool, request.auth.accountId, pageOf(request.query)));

  app.post('/api/v1/users', {
    schema: {
      operationId: 'createUser',
      summary: 'Create a user',
      description: 'Adds a person who signs in with this email and password and sees this account. Test key: validated, nothing stored, `sandbox: true`.',
      tags: ['users'],
      body: CreateBody,
      response: { 201: { ...UserSchema, examples: [{ ...USER_EXAMPLE, email: 'grace@example.com' }] }, 409: Conflict },
    },
  }, async (request, reply) => {
    const r = await accountWrite(app, request, (db) => createUser(db, { accountId: request.auth.accountId, ...request.body }, clock.now()));
    return reply.code(201).send(withSandbox(r));
  });

  app.get('/api/v1/users/:id', {
    schema: {
      operationId: 'getUser', summary: 'Get a user', tags: ['users'], params: IdParams,
      description: 'One user of this account (never the password hash).',
      response: { 200: { ...UserSchema, examples: [USER_EXAMPLE] }, 404: NotFound },
    },
  }, async (request) => requireUser(pool, request.auth.accountId, request.params.id));

  app.patch('/api/v1/users/:id', {
    schema: {
      operationId: 'updateUser',
      summary: 'Change a user\'s email or password',
      description: 'A new password ends the user\'s other sessions (the one making the change stays signed in). Test key: validated, nothing changed, `sandbox: true`.',
      tags: ['users'],
      params: IdParams,
      body: UpdateBody,
      response: { 200: { ...UserSchema, examples: [USER_EXAMPLE] }, 404: NotFound, 409: Conflict },
    },
  }, async (request) => {
    const keep = isSessionAuth(request.auth) ? request.auth.sessionHash : null;
    const r = await accountWrite(app, request, (db) => changeUser(db, request.auth.accountId, request.params.id, request.body, clock.now(), keep));
    return withSandbox(r);
  });

  app.delete('/api/v1/users/:id', {
    schema: {
      operationId: 'deleteUser',
      summary: 'Delete a user',
      description: 'Removes the person and ends their sessions. You cannot delete the user you are signed in as (409). Test key: 204, nothing deleted.',
      tags: ['users'],
      params: IdParams,
      response: { 204: Type.Null({ description: 'Deleted' }), 404: NotFound, 409: Conflict },
    },
  }, async (request, reply) => {
    const self = isSessionAuth(request.auth) ? request.auth.userId : null;
    await accountWrite(app, request, (db) => removeUser(db, request.auth.accountId, request.params.id, self));
    return reply.code(204).send(null);
  });
}
