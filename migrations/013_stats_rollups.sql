-- Rollups: counters maintained as events are inserted, so campaign reports and account
-- statistics read a few counter rows and never scan events (docs/stats.md,
-- docs/decisions/0012-campaigns.md).
--
-- Every counter table is split into 4 shards picked by the inserting backend
-- (pg_backend_pid() % 4): all events of one account would otherwise update one row and
-- serialise every transaction that records events for it on that row's lock. Readers sum
-- the shards.

-- The counters of one campaign.
CREATE TABLE campaign_stats (
  campaign_id   text NOT NULL,
  shard         smallint NOT NULL,
  sent          bigint NOT NULL DEFAULT 0,
  delivered     bigint NOT NULL DEFAULT 0,
  deferred      bigint NOT NULL DEFAULT 0,
  hard_bounced  bigint NOT NULL DEFAULT 0,
  soft_bounced  bigint NOT NULL DEFAULT 0,
  complaints    bigint NOT NULL DEFAULT 0,
  unsubscribes  bigint NOT NULL DEFAULT 0,
  opens         bigint NOT NULL DEFAULT 0,
  unique_opens  bigint NOT NULL DEFAULT 0,
  machine_opens bigint NOT NULL DEFAULT 0,
  clicks        bigint NOT NULL DEFAULT 0,
  unique_clicks bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (campaign_id, shard)
);

-- The report's timeline: hourly buckets of one campaign.
CREATE TABLE campaign_hourly (
  campaign_id text NOT NULL,
  hour        timestamptz NOT NULL,
  shard       smallint NOT NULL,
  delivered   bigint NOT NULL DEFAULT 0,
  opens       bigint NOT NULL DEFAULT 0,
  clicks      bigint NOT NULL DEFAULT 0,
  bounces     bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (campaign_id, hour, shard)
);

-- The report's top links: clicks and unique clicks (distinct messages) per URL.
CREATE TABLE campaign_links (
  campaign_id   text NOT NULL,
  url           text NOT NULL,
  shard         smallint NOT NULL,
  clicks        bigint NOT NULL DEFAULT 0,
  unique_clicks bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (campaign_id, url, shard)
);
-- Who clicked which link: the arbiter of a link's unique clicks (insert, ON CONFLICT DO NOTHING).
CREATE TABLE campaign_link_visitors (
  campaign_id text NOT NULL,
  url         text NOT NULL,
  message_id  text NOT NULL,
  PRIMARY KEY (campaign_id, url, message_id)
);

-- Daily counters of an account per scope: '' (everything), 'c:<campaign id>', 't:<tag>'.
-- GET /api/v1/stats sums at most ~31 days × 4 shards of one scope.
CREATE TABLE stats_daily (
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  scope         text NOT NULL,
  day           date NOT NULL,
  shard         smallint NOT NULL,
  sent          bigint NOT NULL DEFAULT 0,
  delivered     bigint NOT NULL DEFAULT 0,
  deferred      bigint NOT NULL DEFAULT 0,
  hard_bounced  bigint NOT NULL DEFAULT 0,
  soft_bounced  bigint NOT NULL DEFAULT 0,
  complaints    bigint NOT NULL DEFAULT 0,
  unsubscribes  bigint NOT NULL DEFAULT 0,
  opens         bigint NOT NULL DEFAULT 0,
  unique_opens  bigint NOT NULL DEFAULT 0,
  machine_opens bigint NOT NULL DEFAULT 0,
  clicks        bigint NOT NULL DEFAULT 0,
  unique_clicks bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, scope, day, shard)
);

-- Sending health episodes: at_risk_since is set when the account's rates cross the at-risk
-- thresholds and cleared when they fall back; an acknowledgement later than at_risk_since lets
-- campaigns send again for the rest of that episode.
CREATE TABLE account_health (
  account_id      text PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  status          text NOT NULL CHECK (status IN ('ok', 'warning', 'at_risk')),
  at_risk_since   timestamptz,
  acknowledged_at timestamptz,
  evaluated_at    timestamptz NOT NULL
);

-- One statement per inserting statement (transition table): every counter of every event of
-- the statement, grouped, in one pass. The message's first click is decided by setting
-- messages.clicked_at where it is still NULL (the row lock makes that exact under concurrency);
-- unique opens are already marked by the tracking insert (events_first_open, migration 005).
CREATE FUNCTION events_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s smallint := pg_backend_pid() % 4;
  written bigint;
BEGIN
  WITH first_click AS (
    UPDATE messages m SET clicked_at = c.at
      FROM (SELECT message_id, min(occurred_at) AS at FROM new_events
             WHERE type = 'click' AND message_id IS NOT NULL GROUP BY message_id) c
     WHERE m.id = c.message_id AND m.clicked_at IS NULL
    RETURNING m.id
  ),
  first_open AS (
    UPDATE messages m SET opened_at = o.at
      FROM (SELECT message_id, min(occurred_at) AS at FROM new_events
             WHERE type = 'open' AND message_id IS NOT NULL GROUP BY message_id) o
     WHERE m.id = o.message_id AND m.opened_at IS NULL
    RETURNING m.id
  ),
  ranked AS (
    SELECT e.*, row_number() OVER (PARTITION BY e.message_id, e.type ORDER BY e.occurred_at, e.seq) AS nth
      FROM new_events e
  ),
  ev AS (
    SELECT r.account_id, r.campaign_id, r.occurred_at, r.url, r.message_id, r.type,
           coalesce(m.tags, '{}') AS tags,
           (r.type = 'sent')::int AS sent,
           (r.type = 'delivered')::int AS delivered,
           (r.type = 'deferred')::int AS deferred,
           (r.type = 'hard_bounce')::int AS hard_bounced,
           (r.type = 'soft_bounce')::int AS soft_bounced,
           (r.type = 'spam')::int AS complaints,
           (r.type = 'unsubscribe')::int AS unsubscribes,
           (r.type = 'open')::int AS opens,
           coalesce(r.type = 'open' AND r.data->>'unique' = 'true', false)::int AS unique_opens,
           coalesce(r.type = 'open' AND r.data->>'machine' = 'true', false)::int AS machine_opens,
           (r.type = 'click')::int AS clicks,
           coalesce(r.type = 'click' AND r.nth = 1 AND r.message_id IN (SELECT id FROM first_click), false)::int AS unique_clicks
      FROM ranked r LEFT JOIN messages m ON m.id = r.message_id
  ),
  campaign_counts AS (
    INSERT INTO campaign_stats AS t (campaign_id, shard, sent, delivered, deferred, hard_bounced, soft_bounced, complaints,
                                     unsubscribes, opens, unique_opens, machine_opens, clicks, unique_clicks)
    SELECT campaign_id, s, sum(sent), sum(delivered), sum(deferred), sum(hard_bounced), sum(soft_bounced), sum(complaints),
           sum(unsubscribes), sum(opens), sum(unique_opens), sum(machine_opens), sum(clicks), sum(unique_clicks)
      FROM ev WHERE campaign_id IS NOT NULL GROUP BY campaign_id ORDER BY campaign_id
    ON CONFLICT (campaign_id, shard) DO UPDATE SET
      sent = t.sent + EXCLUDED.sent, delivered = t.delivered + EXCLUDED.delivered, deferred = t.deferred + EXCLUDED.deferred,
      hard_bounced = t.hard_bounced + EXCLUDED.hard_bounced, soft_bounced = t.soft_bounced + EXCLUDED.soft_bounced,
      complaints = t.complaints + EXCLUDED.complaints, unsubscribes = t.unsubscribes + EXCLUDED.unsubscribes,
      opens = t.opens + EXCLUDED.opens, unique_opens = t.unique_opens + EXCLUDED.unique_opens,
      machine_opens = t.machine_opens + EXCLUDED.machine_opens, clicks = t.clicks + EXCLUDED.clicks,
      unique_clicks = t.unique_clicks + EXCLUDED.unique_clicks
    RETURNING 1
  ),
  hourly AS (
    INSERT INTO campaign_hourly AS t (campaign_id, hour, shard, delivered, opens, clicks, bounces)
    SELECT campaign_id, date_trunc('hour', occurred_at), s, sum(delivered), sum(opens), sum(clicks), sum(hard_bounced + soft_bounced)
      FROM ev WHERE campaign_id IS NOT NULL AND type IN ('delivered', 'open', 'click', 'hard_bounce', 'soft_bounce')
     GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (campaign_id, hour, shard) DO UPDATE SET
      delivered = t.delivered + EXCLUDED.delivered, opens = t.opens + EXCLUDED.opens,
      clicks = t.clicks + EXCLUDED.clicks, bounces = t.bounces + EXCLUDED.bounces
    RETURNING 1
  ),
  new_visitors AS (
    INSERT INTO campaign_link_visitors (campaign_id, url, message_id)
    SELECT DISTINCT campaign_id, url, message_id FROM ev
     WHERE type = 'click' AND campaign_id IS NOT NULL AND url IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING campaign_id, url
  ),
  links AS (
    INSERT INTO campaign_links AS t (campaign_id, url, shard, clicks, unique_clicks)
    SELECT c.campaign_id, c.url, s, c.n, (SELECT count(*) FROM new_visitors v WHERE v.campaign_id = c.campaign_id AND v.url = c.url)
      FROM (SELECT campaign_id, url, count(*) AS n FROM ev
             WHERE type = 'click' AND campaign_id IS NOT NULL AND url IS NOT NULL GROUP BY 1, 2) c
     ORDER BY 1, 2
    ON CONFLICT (campaign_id, url, shard) DO UPDATE SET clicks = t.clicks + EXCLUDED.clicks, unique_clicks = t.unique_clicks + EXCLUDED.unique_clicks
    RETURNING 1
  ),
  scoped AS (
    SELECT ev.*, '' AS scope FROM ev
    UNION ALL SELECT ev.*, 'c:' || campaign_id FROM ev WHERE campaign_id IS NOT NULL
    UNION ALL SELECT ev.*, 't:' || tag FROM ev, unnest(ev.tags) AS tag
  ),
  daily AS (
    INSERT INTO stats_daily AS t (account_id, scope, day, shard, sent, delivered, deferred, hard_bounced, soft_bounced, complaints,
                                  unsubscribes, opens, unique_opens, machine_opens, clicks, unique_clicks)
    SELECT account_id, scope, (occurred_at AT TIME ZONE 'UTC')::date, s, sum(sent), sum(delivered), sum(deferred), sum(hard_bounced),
           sum(soft_bounced), sum(complaints), sum(unsubscribes), sum(opens), sum(unique_opens), sum(machine_opens), sum(clicks),
           sum(unique_clicks)
      FROM scoped GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (account_id, scope, day, shard) DO UPDATE SET
      sent = t.sent + EXCLUDED.sent, delivered = t.delivered + EXCLUDED.delivered, deferred = t.deferred + EXCLUDED.deferred,
      hard_bounced = t.hard_bounced + EXCLUDED.hard_bounced, soft_bounced = t.soft_bounced + EXCLUDED.soft_bounced,
      complaints = t.complaints + EXCLUDED.complaints, unsubscribes = t.unsubscribes + EXCLUDED.unsubscribes,
      opens = t.opens + EXCLUDED.opens, unique_opens = t.unique_opens + EXCLUDED.unique_opens,
      machine_opens = t.machine_opens + EXCLUDED.machine_opens, clicks = t.clicks + EXCLUDED.clicks,
      unique_clicks = t.unique_clicks + EXCLUDED.unique_clicks
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM campaign_counts) + (SELECT count(*) FROM hourly) + (SELECT count(*) FROM links)
       + (SELECT count(*) FROM daily) + (SELECT count(*) FROM first_open) INTO written;
  RETURN NULL;
END $$;

CREATE TRIGGER events_rollup AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION events_rollup();
