import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { authenticate, RATE_WINDOW_MS, rateWindowStart } from '../../domain/keys/api-keys.js';
import { VerifiedKeyCache } from '../../domain/keys/key-cache.js';
import { authenticateSession, CSRF_HEADER, csrfMatches, SESSION_COOKIE } from '../../domain/users/sessions.js';
import { AppError } from '../../errors.js';

function presentedKey(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1] : auth.trim();
  }
  const x = request.headers['x-api-key'];
  return Array.isArray(x) ? x[0] : x;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authentication and the per-account rate limit for every /api/v1 route not marked public.
 * An API key (Authorization or X-Api-Key) wins; without one, the dashboard's session cookie
 * is accepted, and then every state-changing request must carry the session's CSRF token in
 * X-CSRF-Token — whatever its Origin, so no cross-site form or misconfigured proxy can
 * write with a person's cookie. Verified keys are cached per process for a few seconds
 * (`app.keyCache`, domain/keys/key-cache.ts) and requests are counted by the process's group
 * commit of request writes (`app.requestWrites`, domain/request-writes.ts), exact across
 * processes; the RateLimit-* headers go on every authenticated response, and the 601st request
 * in a window gets 429. The hook is attached to the routes that need it when they are added
 * (every /api/v1 route not marked public), so other requests do not run it at all.
 */
export const authPlugin = fp(async (app: FastifyInstance) => {
  app.decorateRequest('auth', null as never);
  app.decorate('keyCache', new VerifiedKeyCache(app.deps.clock));
  const counter = app.requestWrites;
  const authenticateRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    const now = app.deps.clock.now();
    const db = app.deps.relaxedPool ?? app.deps.pool;
    const key = presentedKey(request);
    const cookie = key === undefined ? request.cookies[SESSION_COOKIE] : undefined;
    if (cookie) {
      const session = await authenticateSession(db, cookie, now);
      const header = request.headers[CSRF_HEADER];
      if (!SAFE_METHODS.has(request.method) && !csrfMatches(session.csrfToken, Array.isArray(header) ? header[0] : header)) {
        throw new AppError('forbidden', 'Missing or wrong X-CSRF-Token header: a write authenticated by the session cookie must carry the csrfToken of GET /api/v1/session');
      }
      request.auth = session;
    } else {
      request.auth = await authenticate(db, key, now, { cache: app.keyCache, counter });
    }
    const limit = app.deps.config.rateLimits[request.auth.mode];
    const resetMs = rateWindowStart(now).getTime() + RATE_WINDOW_MS - now.getTime();
    const reset = Math.max(1, Math.ceil(resetMs / 1000));
    reply.header('RateLimit-Limit', String(limit));
    reply.header('RateLimit-Remaining', String(Math.max(0, limit - request.auth.windowCount)));
    reply.header('RateLimit-Reset', String(reset));
    if (request.auth.windowCount > limit) {
      throw new AppError('rate_limited', `Rate limit of ${limit} requests per minute exceeded for this account's ${request.auth.mode} keys`, { retryAfter: reset });
    }
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.startsWith('/api/v1') || route.config?.public) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    // A new array: the HEAD twin Fastify adds to a GET route gets its own (test/foundation/request-writes.test.ts).
    route.onRequest = [authenticateRequest as onRequestHookHandler, ...own];
  });
});
