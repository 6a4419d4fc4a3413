import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { COMMON_ERROR_RESPONSES, Problem } from './problem.js';

/**
 * The OpenAPI 3.1 document is generated from the route schemas, so it cannot drift from the
 * code. Every /api/v1 route gets the bearer/api-key security schemes and the common problem
 * responses added here rather than repeated in each route; public routes get `security: []`.
 * Each route names its own stable camelCase `operationId` (SDKs name methods by it);
 * test/hardening/openapi-lint.test.ts keeps the document clean under Redocly's recommended rules.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(Problem);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Postline API',
        version: '1.0.0',
        description: 'Self-hosted email sending platform. Errors are RFC 9457 problem documents with a stable `code` (see /docs and docs/errors.md).',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: app.deps.config.baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer sk_live_… or sk_test_…' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          fblKey: { type: 'apiKey', in: 'header', name: 'X-FBL-Key', description: 'The complaint intake key (`postline fbl-secret`)' },
          fblKeyQuery: { type: 'apiKey', in: 'query', name: 'key', description: 'The complaint intake key, for senders that cannot set a header' },
          session: {
            type: 'apiKey', in: 'cookie', name: 'postline_session',
            description: 'The dashboard\'s session (POST /api/v1/session). Every POST, PUT, PATCH and DELETE made with it must also send X-CSRF-Token (the csrfToken of the session), or it is refused with 403.',
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url, route }) => {
      const s = { ...(schema ?? {}) } as Record<string, unknown>;
      if (url.startsWith('/api/v1') && !route.config?.public) {
        s.security = s.security ?? [{ bearer: [] }, { apiKey: [] }, { session: [] }];
        const response = { ...((s.response as Record<string, unknown>) ?? {}) };
        for (const [status, { description }] of Object.entries(COMMON_ERROR_RESPONSES)) {
          if (!response[status]) response[status] = { description, content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } } };
        }
        s.response = response;
      } else if (s.security === undefined) {
        // Public routes (the credential is in the link, or there is none) say so explicitly:
        // Redocly's security-defined rule, and SDK generators, need security on every operation.
        s.security = [];
      }
      return { schema: s as never, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/api/v1/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
}
