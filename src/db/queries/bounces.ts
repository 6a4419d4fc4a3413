import type { Queryable } from '../pool.js';

/**
 * The address's current run of recipient-side soft bounces (docs/bounces.md, the 30-day
 * rule): soft_bounce events whose bounce is on the recipient's side (or undecided) since
 * the last sign of life — an open, a click, or a delivery that no bounce followed.
 * Sender-side failures are neither: they say nothing about the address.
 */
export interface SoftBounceRun {
  first: Date | null;
  messages: number;
  lastReason: string | null;
  lastDiagnostic: string | null;
}

// Both scans use events_engagement (account_id, lower(email), type, occurred_at); the
// NOT EXISTS probe per delivered event uses events_message. An address has few events.
export async function selectSoftBounceRun(db: Queryable, accountId: string, email: string): Promise<SoftBounceRun> {
  const { rows } = await db.query<{ first: Date | null; messages: string; last_reason: string | null; last_diagnostic: string | null }>(
    `WITH alive AS (
       SELECT max(e.occurred_at) AS at FROM events e
        WHERE e.account_id = $1 AND lower(e.email) = lower($2)
          AND (e.type IN ('open', 'click')
               OR (e.type = 'delivered' AND NOT EXISTS (
                     SELECT 1 FROM events b WHERE b.message_id = e.message_id AND b.type IN ('soft_bounce', 'hard_bounce'))))
     ), run AS (
       SELECT s.occurred_at, s.message_id, s.data->'bounce' AS bounce FROM events s, alive
        WHERE s.account_id = $1 AND lower(s.email) = lower($2) AND s.type = 'soft_bounce'
          AND s.data->'bounce'->>'category' IN ('recipient', 'unknown')
          AND (alive.at IS NULL OR s.occurred_at > alive.at)
     )
     SELECT min(occurred_at) AS first, count(DISTINCT message_id) AS messages,
            (SELECT bounce->>'reason' FROM run ORDER BY occurred_at DESC LIMIT 1) AS last_reason,
            (SELECT bounce->>'diagnostic' FROM run ORDER BY occurred_at DESC LIMIT 1) AS last_diagnostic
       FROM run`,
    [accountId, email],
  );
  const r = rows[0];
  return { first: r?.first ?? null, messages: Number(r?.messages ?? 0), lastReason: r?.last_reason ?? null, lastDiagnostic: r?.last_diagnostic ?? null };
}

/** The address's `suspended` soft bounces since a moment and since its last sign of life (docs/bounces.md). */
export interface SuspendedRun {
  messages: number;
  first: Date | null;
  last: Date | null;
  lastDiagnostic: string | null;
}

// Same index and same "sign of life" as selectSoftBounceRun; only `suspended` bounces count,
// one per message, from `since` on.
export async function selectSuspendedRun(db: Queryable, accountId: string, email: string, since: Date): Promise<SuspendedRun> {
  const { rows } = await db.query<{ messages: string; first: Date | null; last: Date | null; last_diagnostic: string | null }>(
    `WITH alive AS (
       SELECT max(e.occurred_at) AS at FROM events e
        WHERE e.account_id = $1 AND lower(e.email) = lower($2)
          AND (e.type IN ('open', 'click')
               OR (e.type = 'delivered' AND NOT EXISTS (
                     SELECT 1 FROM events b WHERE b.message_id = e.message_id AND b.type IN ('soft_bounce', 'hard_bounce'))))
     ), run AS (
       SELECT s.occurred_at, s.message_id, s.data->'bounce'->>'diagnostic' AS diagnostic FROM events s, alive
        WHERE s.account_id = $1 AND lower(s.email) = lower($2) AND s.type = 'soft_bounce'
          AND s.data->'bounce'->>'reason' = 'suspended' AND s.occurred_at >= $3
          AND (alive.at IS NULL OR s.occurred_at > alive.at)
     )
     SELECT count(DISTINCT message_id) AS messages, min(occurred_at) AS first, max(occurred_at) AS last,
            (SELECT diagnostic FROM run ORDER BY occurred_at DESC LIMIT 1) AS last_diagnostic
       FROM run`,
    [accountId, email, since],
  );
  const r = rows[0];
  return { messages: Number(r?.messages ?? 0), first: r?.first ?? null, last: r?.last ?? null, lastDiagnostic: r?.last_diagnostic ?? null };
}

export interface OutcomeCount {
  type: string;
  category: string | null;
  reason: string | null;
  n: number;
}

// Account health over a window: outcomes by type and bounce side/reason. Scans the account's
// events of the window through events_account_seq (account first); a week of events of one
// account is what the dashboard shows anyway.
export async function countOutcomesSince(db: Queryable, accountId: string, since: Date): Promise<OutcomeCount[]> {
  const { rows } = await db.query<{ type: string; category: string | null; reason: string | null; n: string }>(
    `SELECT type, data->'bounce'->>'category' AS category, data->'bounce'->>'reason' AS reason, count(*) AS n
       FROM events
      WHERE account_id = $1 AND occurred_at >= $2 AND type IN ('sent', 'delivered', 'hard_bounce', 'soft_bounce', 'spam')
      GROUP BY 1, 2, 3`,
    [accountId, since],
  );
  return rows.map((r) => ({ type: r.type, category: r.category, reason: r.reason, n: Number(r.n) }));
}
