import type { Queryable } from '../pool.js';

/** One lease call's arguments (migration 023, delivery_lease). */
export interface LeaseRequest {
  destination: string;
  source: string;
  provider: string;
  worker: string;
  now: Date;
  wantConnections: number;
  open: number;
  inFlight: number;
  wantTokens: number;
  sent: number;
  maxConnections: number;
  /** Tokens per second at full speed; null: no per-minute limit. */
  rate: number | null;
  burst: number;
  perDay: number | null;
  leaseMs: number;
  rampMs: number;
}

export interface LeaseGrant {
  connections: number;
  tokens: number;
  suspendedUntil: Date | null;
  rateFactor: number;
  retryMs: number;
}

export async function leaseDestination(db: Queryable, r: LeaseRequest): Promise<LeaseGrant> {
  const { rows } = await db.query<{ connections: number; tokens: number; suspended_until: Date | null; rate_factor: number; retry_ms: number }>(
    `SELECT * FROM delivery_lease($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
    [r.destination, r.source, r.provider, r.worker, r.now, r.wantConnections, r.open, r.inFlight, r.wantTokens, r.sent, r.maxConnections, r.rate, r.burst, r.perDay, r.leaseMs, r.rampMs],
  );
  const g = rows[0];
  return { connections: g.connections, tokens: g.tokens, suspendedUntil: g.suspended_until, rateFactor: g.rate_factor, retryMs: g.retry_ms };
}

/** Suspends a destination after a throttle reply; returns the suspension's end (never shortened). */
export async function throttleDestination(
  db: Queryable,
  t: { destination: string; source: string; provider: string; now: Date; until: Date; reply: string; decrease: number },
): Promise<Date> {
  const { rows } = await db.query<{ until: Date }>(`SELECT delivery_throttle($1, $2, $3, $4, $5, $6, $7) AS until`, [
    t.destination, t.source, t.provider, t.now, t.until, t.reply, t.decrease,
  ]);
  return rows[0].until;
}

/** Remembers which destination recipient domains resolved to (first resolution, or a changed one). */
export async function recordRoutes(db: Queryable, routes: { domain: string; destination: string }[], now: Date): Promise<void> {
  if (routes.length === 0) return;
  await db.query(
    `INSERT INTO delivery_routes (domain, destination, resolved_at)
     SELECT * FROM unnest($1::text[], $2::text[], array_fill($3::timestamptz, ARRAY[cardinality($1::text[])]))
     ON CONFLICT (domain) DO UPDATE SET destination = EXCLUDED.destination, resolved_at = EXCLUDED.resolved_at
       WHERE delivery_routes.destination <> EXCLUDED.destination`,
    [routes.map((r) => r.domain), routes.map((r) => r.destination), now],
  );
}

/** Destinations suspended now, with the recipient domains routed to each. */
export async function selectSuspended(db: Queryable, now: Date): Promise<{ destination: string; source: string; until: Date; domains: string[] }[]> {
  const { rows } = await db.query<{ destination: string; source: string; until: Date; domains: string[] }>(
    `SELECT s.destination, s.source, s.suspended_until AS until,
            coalesce(array_agg(r.domain) FILTER (WHERE r.domain IS NOT NULL), '{}') AS domains
       FROM delivery_shaping s LEFT JOIN delivery_routes r ON r.destination = s.destination
      WHERE s.suspended_until > $1
      GROUP BY s.destination, s.source, s.suspended_until`,
    [now],
  );
  return rows;
}

/**
 * The heartbeat's one read (one statement, not two every 250 ms): the suspensions, as
 * selectSuspended; and the destinations where `worker` holds connection slots that another
 * worker waits for: that worker wants more than it holds, and holds at least two fewer than
 * `worker` (a split within one slot is as fair as it gets). So a worker that holds all of a
 * destination's slots gives its share back within a heartbeat of another one asking, not at its
 * next renewal.
 */
export async function selectHeartbeat(
  db: Queryable,
  worker: string,
  now: Date,
): Promise<{ suspended: { destination: string; source: string; until: Date; domains: string[] }[]; contested: { destination: string; source: string }[] }> {
  const { rows } = await db.query<{ kind: 'suspended' | 'contested'; destination: string; source: string; until: Date | null; domains: string[] | null }>(
    `SELECT 'suspended' AS kind, s.destination, s.source, s.suspended_until AS until,
            coalesce(array_agg(r.domain) FILTER (WHERE r.domain IS NOT NULL), '{}') AS domains
       FROM delivery_shaping s LEFT JOIN delivery_routes r ON r.destination = s.destination
      WHERE s.suspended_until > $2
      GROUP BY s.destination, s.source, s.suspended_until
     UNION ALL
     SELECT 'contested', mine.destination, mine.source, NULL, NULL FROM delivery_leases mine
      WHERE mine.worker = $1 AND mine.connections > 1
        AND EXISTS (SELECT 1 FROM delivery_leases o
                     WHERE o.destination = mine.destination AND o.source = mine.source AND o.worker <> $1
                       AND o.expires_at > $2 AND o.wanted > o.connections AND o.connections + 1 < mine.connections)`,
    [worker, now],
  );
  return {
    suspended: rows.filter((r) => r.kind === 'suspended').map((r) => ({ destination: r.destination, source: r.source, until: r.until!, domains: r.domains! })),
    contested: rows.filter((r) => r.kind === 'contested').map((r) => ({ destination: r.destination, source: r.source })),
  };
}

export async function releaseWorkerLeases(db: Queryable, worker: string | string[]): Promise<void> {
  await db.query('DELETE FROM delivery_leases WHERE worker = ANY($1::text[])', [Array.isArray(worker) ? worker : [worker]]);
}

/** Workers on this host holding shaping leases (`host:pid:random`, as message leases). */
export async function shapingLeaseHoldersOn(db: Queryable, hostPrefix: string): Promise<string[]> {
  const { rows } = await db.query<{ worker: string }>('SELECT DISTINCT worker FROM delivery_leases WHERE starts_with(worker, $1)', [hostPrefix]);
  return rows.map((r) => r.worker);
}

export interface DestinationStatusRow {
  destination: string;
  source: string;
  provider: string;
  connections: number;
  in_flight: number;
  minute_start: Date | null;
  minute_sent: number;
  prev_minute_sent: number;
  suspended_until: Date | null;
  last_throttle_reply: string | null;
  last_throttle_at: Date | null;
  rate_factor: number;
  day_sent: number;
  active_at: Date;
}

/** Every destination active in the last `sinceMs`, suspended, or holding leases: live figures summed over workers. */
export async function selectDestinationStatus(db: Queryable, now: Date, sinceMs: number): Promise<DestinationStatusRow[]> {
  const { rows } = await db.query<DestinationStatusRow>(
    `SELECT s.destination, s.source, s.provider,
            coalesce(sum(l.connections) FILTER (WHERE l.expires_at > $1), 0)::int AS connections,
            coalesce(sum(l.in_flight) FILTER (WHERE l.expires_at > $1), 0)::int AS in_flight,
            s.minute_start, s.minute_sent, s.prev_minute_sent, s.suspended_until, s.last_throttle_reply,
            s.last_throttle_at, s.rate_factor, s.day_sent, s.active_at
       FROM delivery_shaping s
       LEFT JOIN delivery_leases l ON l.destination = s.destination AND l.source = s.source
      GROUP BY s.destination, s.source
     HAVING s.active_at > $1::timestamptz - make_interval(secs => $2::double precision / 1000)
         OR s.suspended_until > $1 OR count(l.worker) FILTER (WHERE l.expires_at > $1) > 0
      ORDER BY s.destination, s.source`,
    [now, sinceMs],
  );
  return rows;
}
