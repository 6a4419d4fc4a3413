-- Sender-side bounces by reason, per account and UTC day: the one part of the account's
-- sending health (src/domain/account-health.ts) the counters of migration 013 do not hold.
-- With it both health views (GET /api/v1/stats and GET /api/v1/account/health) read rollups
-- only, never events. Sharded like the other counters (pg_backend_pid() % 4).
CREATE TABLE stats_bounce_reasons (
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  day        date NOT NULL,
  reason     text NOT NULL,
  shard      smallint NOT NULL,
  n          bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, day, reason, shard)
);

-- The bounces recorded before this migration.
INSERT INTO stats_bounce_reasons (account_id, day, reason, shard, n)
SELECT account_id, (occurred_at AT TIME ZONE 'UTC')::date, data->'bounce'->>'reason', 0, count(*)
  FROM events
 WHERE type IN ('hard_bounce', 'soft_bounce') AND data->'bounce'->>'category' = 'sender' AND data->'bounce'->>'reason' IS NOT NULL
 GROUP BY 1, 2, 3;

-- Statement-level like the other event triggers: one grouped upsert per inserting statement;
-- a batch without sender-side bounces (sends, deliveries, opens) costs one scan of its
-- transition table.
CREATE FUNCTION events_bounce_reasons_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_bounce_reasons AS t (account_id, day, reason, shard, n)
  SELECT account_id, (occurred_at AT TIME ZONE 'UTC')::date, data->'bounce'->>'reason', pg_backend_pid() % 4, count(*)
    FROM new_events
   WHERE type IN ('hard_bounce', 'soft_bounce') AND data->'bounce'->>'category' = 'sender' AND data->'bounce'->>'reason' IS NOT NULL
   GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (account_id, day, reason, shard) DO UPDATE SET n = t.n + EXCLUDED.n;
  RETURN NULL;
END $$;

CREATE TRIGGER events_bounce_reasons_rollup AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION events_bounce_reasons_rollup();
