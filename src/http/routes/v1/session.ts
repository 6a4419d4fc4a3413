import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  SESSION_COOKIE, signInWithLink, signInWithPassword, signOut, isSessionAuth, type NewSession, type SessionAuth,
} from '../../../domain/users/sessions.js';
import { findUser, toUser } from '../../../domain/users/users.js';
import { requireAccount } from '../../../domain/accounts.js';
import { AppError } from '../../../errors.js';
import { problemResponse } from '../../problem.js';
import { UserSchema, USER_EXAMPLE } from './users.js';

const SessionSchema = Type.Object({
  user: UserSchema,
  account: Type.Object({ id: Type.String(), name: Type.String(), monthlyQuota: Type.Union([Type.Integer(), Type.Null()]) }),
  csrfToken: Type.String({ description: 'Send it back as X-CSRF-Token on every POST, PUT, PATCH and DELETE made with the session cookie' }),
  expiresAt: Type.String({ format: 'date-time', description: 'When the session ends unless used (7 days idle, 30 days at most)' }),
  delivery: Type.Union([Type.Literal('mx'), Type.Literal('relay'), Type.Literal('capture')], {
    description: 'How this server delivers (POSTLINE_DELIVERY): `capture` is development mode, where the dashboard offers shortcuts such as marking a domain verified',
  }),
});
const SESSION_EXAMPLE = {
  user: USER_EXAMPLE,
  account: { id: 'acc_019a6f0c3b2e7d1a9c4b5e6f7a8b9c0d', name: 'Acme', monthlyQuota: null },
  csrfToken: 'k3Jd9sL2mQ8vR1tX5yZ7aB4cD6eF0gH2',
  expiresAt: '2026-11-30T10:15:30.123Z',
  delivery: 'mx',
};

const SignInBody = Type.Union([
  Type.Object({
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  }, { additionalProperties: false, title: 'password' }),
  Type.Object({
    token: Type.String({ minLength: 1, maxLength: 200, description: 'A one-time sign-in link token (`sil_…`)' }),
  }, { additionalProperties: false, title: 'link' }),
], { examples: [{ email: 'ada@example.com', password: 'correct horse battery staple' }, { token: 'sil_Zm9yIGV4YW1wbGUgb25seTogbm90IGEgcmVhbCB0b2tlbiBhdCBhbGw' }] });

const NotSession = problemResponse('The request was made with an API key: only a signed-in person has a session', 'forbidden', 'This route is for the dashboard\'s session cookie; API keys have no session');

const HINT_COOKIE = 'postline_signed_in';

function cookieOptions(request: FastifyRequest, expires: Date | null) {
  const secure = request.server.deps.config.baseUrl.startsWith('https:');
  return { path: '/', httpOnly: true, sameSite: 'strict' as const, secure, ...(expires ? { expires } : { maxAge: 0 }) };
}

function requireSession(request: FastifyRequest): SessionAuth {
  if (!isSessionAuth(request.auth)) throw new AppError('forbidden', 'This route is for the dashboard\'s session cookie; API keys have no session');
  return request.auth;
}

/** Sign-in, the current session and sign-out, for the dashboard (docs/dashboard.md). */
export async function sessionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;

  const answer = async (reply: FastifyReply, request: FastifyRequest, s: NewSession) => {
    const account = await requireAccount(pool, s.user.account_id);
    const expires = new Date(s.expiresAt.getTime() + 23 * 86_400_000);
    reply.setCookie(SESSION_COOKIE, s.token, cookieOptions(request, expires));
    // A readable hint without any secret: the app asks for the session only when it is set,
    // so a signed-out visit makes no request that is bound to fail.
    reply.setCookie(HINT_COOKIE, '1', { ...cookieOptions(request, expires), httpOnly: false });
    return {
      user: toUser(s.user),
      account: { id: account.id, name: account.name, monthlyQuota: account.monthlyQuota },
      csrfToken: s.csrfToken,
      expiresAt: s.expiresAt.toISOString(),
      delivery: app.deps.config.delivery,
    };
  };

  app.post('/api/v1/session', {
    config: { public: true },
    schema: {
      operationId: 'signIn',
      summary: 'Sign in',
      description: 'Signs a person in with email and password, or with a one-time sign-in link token (first start, `postline users reset-password --link`). Sets the HttpOnly, SameSite=Strict session cookie `postline_session` (and `postline_signed_in=1`, readable by the page, holding no secret). Failed attempts are throttled per address (10 per 15 minutes) and per client IP (50 per 15 minutes): past that, 429 with Retry-After.',
      tags: ['session'],
      security: [],
      body: SignInBody,
      response: {
        200: { ...SessionSchema, examples: [SESSION_EXAMPLE] },
        401: problemResponse('Wrong email or password, or an unknown, expired or used link', 'unauthorized', 'Wrong email or password'),
        429: problemResponse('Too many failed sign-ins for this address or IP', 'rate_limited', 'Too many failed sign-ins for this address; try again in 12 minutes'),
      },
    },
  }, async (request, reply) => {
    const body = request.body;
    const now = clock.now();
    const s = 'token' in body ? await signInWithLink(pool, body.token, request.ip, now) : await signInWithPassword(pool, body, request.ip, now);
    return answer(reply, request, s);
  });

  app.get('/api/v1/session', {
    schema: {
      operationId: 'getSession',
      summary: 'Get the current session',
      description: 'The signed-in person, their account and the CSRF token to send as X-CSRF-Token on writes. The dashboard calls it on every page load. Session cookie only.',
      tags: ['session'],
      response: { 200: { ...SessionSchema, examples: [SESSION_EXAMPLE] }, 403: NotSession },
    },
  }, async (request) => {
    const s = requireSession(request);
    const user = await findUser(pool, s.accountId, s.userId);
    if (!user) throw new AppError('unauthorized', 'Your session has ended; sign in again');
    return {
      user,
      account: { id: s.accountId, name: s.accountName, monthlyQuota: s.monthlyQuota },
      csrfToken: s.csrfToken,
      expiresAt: s.expiresAt.toISOString(),
      delivery: app.deps.config.delivery,
    };
  });

  app.delete('/api/v1/session', {
    schema: {
      operationId: 'signOut',
      summary: 'Sign out',
      description: 'Ends the session and clears the cookie. Needs X-CSRF-Token like every cookie-authenticated write.',
      tags: ['session'],
      response: { 204: Type.Null({ description: 'Signed out' }), 403: NotSession },
    },
  }, async (request, reply) => {
    const s = requireSession(request);
    await signOut(pool, s.sessionHash);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    reply.clearCookie(HINT_COOKIE, { path: '/' });
    return reply.code(204).send(null);
  });
}
