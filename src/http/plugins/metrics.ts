import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics on a registry of this app instance (tests boot several apps in one
 * process). Labelled by the route pattern, never the raw URL, so ids don't explode cardinality.
 */
export const metricsPlugin = fp(async (app: FastifyInstance) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'postline_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'postline_http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const pool = app.deps.pool;
  new Gauge({ name: 'postline_db_pool_total', help: 'Connections in the DB pool', registers: [registry], collect() { this.set(pool.totalCount); } });
  new Gauge({ name: 'postline_db_pool_idle', help: 'Idle connections in the DB pool', registers: [registry], collect() { this.set(pool.idleCount); } });
  new Gauge({ name: 'postline_db_pool_waiting', help: 'Requests waiting for a DB connection', registers: [registry], collect() { this.set(pool.waitingCount); } });

  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });

  app.get('/metrics', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
});
