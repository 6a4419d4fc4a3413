import type { FastifyInstance } from 'fastify';
import { migrationsCurrent } from '../../db/migrate.js';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  // Liveness: the process answers. No database call, so a DB outage doesn't restart pods.
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  // Readiness: the database answers and every migration on disk is applied.
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      const current = await migrationsCurrent(app.deps.pool);
      if (!current) return reply.code(503).send({ status: 'migrations_pending' });
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'database_unreachable' });
    }
  });
}
