import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { deliveryStatus, type DestinationStatus } from '../../delivery/status.js';

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

  deliveryGauges(registry, () => deliveryStatus(pool, app.deps.config.deliveryPolicy, app.deps.clock.now()));

  // The series of each (method, route, status) bound once: prom-client hashes a labels object
  // on every inc/observe otherwise. As many entries as series, which the labels already bound.
  const series = new Map<string, { count: () => void; observe: (seconds: number) => void }>();
  const seriesOf = (method: string, route: string, status: number) => {
    const key = `${method} ${status} ${route}`;
    let s = series.get(key);
    if (!s) {
      const labels = { method, route, status: String(status) };
      const counter = requests.labels(labels);
      const histogram = duration.labels(labels);
      s = { count: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      series.set(key, s);
    }
    return s;
  };
  app.addHook('onResponse', (request, reply, done) => {
    const s = seriesOf(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
    s.count();
    s.observe(reply.elapsedTime / 1000);
    done();
  });

  app.get('/metrics', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
});

/**
 * Traffic shaping per destination (the figures of `postline delivery status`), read from the
 * database once per scrape: every worker's share together, whichever process serves /metrics.
 */
function deliveryGauges(registry: Registry, read: () => Promise<DestinationStatus[]>): void {
  let pending: Promise<DestinationStatus[]> | null = null;
  // The gauges are collected one after another in one scrape: one read serves them all.
  const current = () => (pending ??= read().finally(() => setTimeout(() => (pending = null), 100)));
  const gauge = (name: string, help: string, value: (d: DestinationStatus) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: ['destination', 'provider', 'source'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const d of await current()) {
          const v = value(d);
          if (v !== null) this.set({ destination: d.name, provider: d.provider, source: d.source }, v);
        }
      },
    });
  gauge('postline_delivery_connections', 'Open SMTP connections to the destination, all workers', (d) => d.connections);
  gauge('postline_delivery_in_flight', 'Messages being transmitted to the destination, all workers', (d) => d.inFlight);
  gauge('postline_delivery_sent_last_minute', 'Messages sent to the destination in the last minute', (d) => d.sentLastMinute);
  gauge('postline_delivery_max_connections', 'The destination\'s maxConnections limit', (d) => d.limits.maxConnections);
  gauge('postline_delivery_messages_per_minute', 'The destination\'s messagesPerMinute limit (absent: none)', (d) => d.limits.messagesPerMinute);
  gauge('postline_delivery_messages_per_connection', 'The destination\'s messagesPerConnection limit', (d) => d.limits.messagesPerConnection);
  gauge('postline_delivery_rate_factor', 'The fraction of its limits the destination is sent at (below 1 after a throttle)', (d) => d.rateFactor);
  gauge('postline_delivery_suspended_until_seconds', 'Unix time the destination\'s suspension ends (absent: not suspended)', (d) => (d.suspendedUntil ? Date.parse(d.suspendedUntil) / 1000 : null));
}
