import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppDeps } from './deps.js';
import { loggerOptions } from '../logging.js';
import { randomHex } from '../lib/random-pool.js';
import { registerOpenApi } from './openapi.js';
import compress from '@fastify/compress';
import cookie from '@fastify/cookie';
import { constants as zlib } from 'node:zlib';
import { authPlugin } from './plugins/auth.js';
import { dashboardPlugin } from './plugins/dashboard.js';
import { errorsPlugin, sendProblem } from './plugins/errors.js';
import { inputRulePlugin } from './plugins/input-rule.js';
import { idempotencyPlugin } from './plugins/idempotency.js';
import { metricsPlugin } from './plugins/metrics.js';
import { sandboxPlugin } from './plugins/sandbox.js';
import { sandboxAware } from '../db/sandbox.js';
import { RequestWrites } from '../domain/request-writes.js';
import { fblRoutes } from './routes/fbl.js';
import { healthRoutes } from './routes/health.js';
import { trackingRoutes } from './routes/tracking.js';
import { v1Routes } from './routes/v1/index.js';
import './deps.js';

const REDACT = ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-fbl-key"]', 'req.headers.cookie'];

/**
 * The whole HTTP application as one function, so tests boot exactly what production runs.
 * server.ts only listens. Order: our plugins (errors, metrics, cookies, auth, idempotency), then
 * docs, then routes, then the dashboard (web/dist at `/`).
 */
export async function buildApp(deps: AppDeps, opts: { logger?: boolean } = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger === false ? false : loggerOptions(deps.config.logLevel, REDACT),
    bodyLimit: deps.config.bodyLimit,
    // request.ip (sign-in throttling, logs) comes from X-Forwarded-For only when the peer is a
    // proxy named in POSTLINE_TRUST_PROXY; otherwise the header is ignored (docs/deploy.md).
    trustProxy: deps.config.trustProxy.length > 0 ? deps.config.trustProxy : false,
    // Subscribers are addressed by email in the path; an address may be 254 octets, encoded more.
    // (Under routerOptions: the top-level option is deprecated, FSTDEP022.)
    routerOptions: { maxParamLength: 800 },
    genReqId: () => `req_${randomHex(8)}`,
    requestIdHeader: false,
    // A path whose percent-escapes are not UTF-8 (`/lists/%FF`) is refused before routing; a
    // path segment longer than maxParamLength names no resource (ids are far shorter): 404.
    frameworkErrors: (error, request, reply) => {
      if (error.code === 'FST_ERR_BAD_URL') return sendProblem(request, reply, 'invalid_url', 'The URL path is not percent-encoded UTF-8');
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendProblem(request, reply, 'not_found', 'No resource has an id that long (a path segment may be at most 800 characters)');
      return sendProblem(request, reply, 'internal_error', `Something went wrong on our side; quote request id ${request.id} when reporting it`);
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Handlers get the pool through the test-key sandbox (db/sandbox.ts): the same pool for live
  // keys, a rolled-back transaction for a test key's writes (plugins/sandbox.ts).
  app.decorate('deps', { ...deps, pool: sandboxAware(deps.pool) });
  // One group commit for what requests write on their way (rate counts, accepted sends).
  app.decorate('requestWrites', new RequestWrites({ pool: app.deps.pool, relaxedPool: deps.relaxedPool }));
  // JSON only: a text/plain body is an error, not a string handed to a JSON route.
  // Routes that take raw bodies (FBL intake) register their own parser in their scope.
  app.removeContentTypeParser('text/plain');
  // Hooks that never wait take `done` rather than being async: no promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  await app.register(errorsPlugin);
  // Answers of 1 KB and more go out br or gzip compressed (the dashboard's bundle, the
  // 395 KB openapi.json, long lists): brotli at quality 4, which compresses about as well as
  // gzip -6 at a fraction of brotli's default cost per request.
  await app.register(compress, { threshold: 1024, encodings: ['br', 'gzip'], brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } } });
  await app.register(inputRulePlugin);
  await app.register(metricsPlugin);
  await app.register(cookie);
  await app.register(authPlugin);
  await app.register(idempotencyPlugin);
  await app.register(sandboxPlugin, { realPool: deps.pool });
  await registerOpenApi(app);
  await app.register(healthRoutes);
  await app.register(fblRoutes);
  await app.register(trackingRoutes);
  await app.register(v1Routes);
  await app.register(dashboardPlugin);
  return app;
}
