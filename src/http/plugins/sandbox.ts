import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { Pool } from '../../db/pool.js';
import { runInSandbox } from '../../db/sandbox.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A test-key write: its handler ran in a rolled-back transaction (db/sandbox.ts). */
    sandboxed?: boolean;
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const SANDBOX_FLAG = {
  type: 'boolean',
  description: 'true when a test key made the request: it was validated and answered as with a live key, and nothing was changed',
};

type JsonSchema = Record<string, unknown> & { type?: string; properties?: Record<string, unknown> };

/** The 2xx response schema with an optional `sandbox` member, so serialisation keeps it and the document shows it. */
function withSandboxMember(schema: JsonSchema): JsonSchema {
  if (schema.type !== 'object' || !schema.properties || 'sandbox' in schema.properties) return schema;
  return { ...schema, properties: { ...schema.properties, sandbox: SANDBOX_FLAG } };
}

/**
 * Test keys perform no real action, on every write route (docs/api-keys.md): the handler of a
 * POST, PUT, PATCH or DELETE under /api/v1 called with a test key runs inside a sandbox, a
 * transaction rolled back when it returns, with every statement of the app's pool sent there.
 * Validation, errors and answers are the live ones (the same code runs); a JSON answer gains
 * `sandbox: true`, an empty 204 stays empty. Routes added later are covered without doing
 * anything; only effects outside the database check `inSandbox()` themselves.
 */
export const sandboxPlugin = fp(async (app: FastifyInstance, opts: { realPool: Pool }) => {
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!route.url.startsWith('/api/v1/') || !methods.some((m) => WRITES.has(m))) return;
    const handler = route.handler;
    route.handler = function sandboxedHandler(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      if (request.auth?.mode !== 'test' || !WRITES.has(request.method)) return handler.call(this, request, reply);
      request.sandboxed = true;
      return runInSandbox(opts.realPool, async () => handler.call(this, request, reply));
    };
    const response = route.schema?.response as Record<string, JsonSchema> | undefined;
    if (response) {
      for (const code of Object.keys(response)) {
        if (/^2/.test(code)) response[code] = withSandboxMember(response[code]);
      }
    }
  });

  app.addHook('preSerialization', (request, reply, payload: unknown, done) => {
    if (!request.sandboxed || reply.statusCode >= 300 || payload === null || typeof payload !== 'object' || Array.isArray(payload) || Buffer.isBuffer(payload)) return done(null, payload);
    done(null, 'sandbox' in payload ? payload : { ...payload, sandbox: true });
  });
});
