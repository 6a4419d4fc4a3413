import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { authenticate, RATE_WINDOW_MS, rateWindowStart } from '../../domain/apiKeys.js';
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

/**
 * API key auth and the per-account rate limit for every /api/v1 route not marked public.
 * One query authenticates and counts (db/queries/apiKeys.ts); the RateLimit-* headers go
 * on every authenticated response, and the 601st request in a window gets 429.
 */
export const authPlugin = fp(async (app: FastifyInstance) => {
  app.decorateRequest('auth', null as never);
  app.addHook('onRequest', async (request, reply) => {
    const url = request.routeOptions.url;
    if (!url || !url.startsWith('/api/v1') || request.routeOptions.config.public) return;
    const now = app.deps.clock.now();
    request.auth = await authenticate(app.deps.relaxedPool ?? app.deps.pool, presentedKey(request), now);
    const limit = app.deps.config.rateLimits[request.auth.mode];
    const resetMs = rateWindowStart(now).getTime() + RATE_WINDOW_MS - now.getTime();
    const reset = Math.max(1, Math.ceil(resetMs / 1000));
    reply.header('RateLimit-Limit', String(limit));
    reply.header('RateLimit-Remaining', String(Math.max(0, limit - request.auth.windowCount)));
    reply.header('RateLimit-Reset', String(reset));
    if (request.auth.windowCount > limit) {
      throw new AppError('rate_limited', `Rate limit of ${limit} requests per minute exceeded for this account's ${request.auth.mode} keys`, { retryAfter: reset });
    }
  });
});
