-- Traffic shaping shared by every worker (docs/delivery-policy.md, decision 0024).
-- One row per (destination, source): the provider's suspension, its AIMD rate factor, the
-- token bucket of its per-minute limit, the 24-hour quota of a relay, and a per-minute count
-- of what was sent (for `postline delivery status`). `source` is '' until IP pools exist.
CREATE TABLE delivery_shaping (
  destination        text NOT NULL,
  source             text NOT NULL DEFAULT '',
  provider           text NOT NULL,
  suspended_until    timestamptz,
  last_throttle_reply text,
  last_throttle_at   timestamptz,
  rate_factor        double precision NOT NULL DEFAULT 1,
  factor_at          timestamptz NOT NULL,
  tokens             double precision NOT NULL,
  tokens_at          timestamptz NOT NULL,
  day_start          timestamptz,
  day_sent           integer NOT NULL DEFAULT 0,
  minute_start       timestamptz,
  minute_sent        integer NOT NULL DEFAULT 0,
  prev_minute_sent   integer NOT NULL DEFAULT 0,
  active_at          timestamptz NOT NULL,
  PRIMARY KEY (destination, source)
);

-- Connection slots a worker holds for a destination, renewed every few seconds: a worker that
-- dies stops renewing and its slots return when its lease expires.
CREATE TABLE delivery_leases (
  destination text NOT NULL,
  source      text NOT NULL DEFAULT '',
  worker      text NOT NULL,
  connections integer NOT NULL,
  wanted      integer NOT NULL,
  in_flight   integer NOT NULL,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (destination, source, worker)
);

-- Which destination a recipient domain's MX hosts belong to, as the workers resolved it: the
-- claim skips the domains of a suspended destination, and a suspension parks their queue.
CREATE TABLE delivery_routes (
  domain      text PRIMARY KEY,
  destination text NOT NULL,
  resolved_at timestamptz NOT NULL
);
CREATE INDEX delivery_routes_destination ON delivery_routes (destination);

-- One worker's lease call for one destination, under the destination row's lock (so two
-- workers never both take the last slot or token). Returns the connection slots the worker
-- may hold (absolute), the tokens it may spend now, the suspension, and when to ask again.
--   p_want_conns: slots wanted; p_open: connections this worker has open (counted as held
--   until they close, so a shrinking grant never lets another worker overshoot);
--   p_rate: tokens per second at full speed (null: no per-minute limit); p_burst: bucket size;
--   p_per_day: 24-hour quota (relay) or null; p_sent: messages sent since the last call.
CREATE FUNCTION delivery_lease(
  p_dest text, p_source text, p_provider text, p_worker text, p_now timestamptz,
  p_want_conns integer, p_open integer, p_in_flight integer, p_want_tokens integer, p_sent integer,
  p_max_conns integer, p_rate double precision, p_burst integer, p_per_day integer,
  p_lease_ms integer, p_ramp_ms integer
) RETURNS TABLE (connections integer, tokens integer, suspended_until timestamptz, rate_factor double precision, retry_ms integer)
LANGUAGE plpgsql AS $$
DECLARE
  s delivery_shaping%ROWTYPE;
  f double precision;
  steps integer;
  max_eff integer;
  others_held integer;
  others_wanted integer;
  others_n integer;
  granted integer;
  got integer := 0;
  retry integer := 0;
  t double precision;
  r double precision;
BEGIN
  INSERT INTO delivery_shaping (destination, source, provider, factor_at, tokens, tokens_at, active_at)
  VALUES (p_dest, p_source, p_provider, p_now, coalesce(p_burst, 0), p_now, p_now)
  ON CONFLICT DO NOTHING;
  SELECT * INTO s FROM delivery_shaping d WHERE d.destination = p_dest AND d.source = p_source FOR UPDATE;
  DELETE FROM delivery_leases l WHERE l.destination = p_dest AND l.source = p_source AND l.expires_at <= p_now AND l.worker <> p_worker;

  -- Additive increase: a tenth of the limits back for every ramp period since the last change.
  f := s.rate_factor;
  IF f < 1 AND p_now > s.factor_at THEN
    steps := floor(extract(epoch FROM p_now - s.factor_at) * 1000 / p_ramp_ms);
    IF steps > 0 THEN
      f := least(1, f + 0.1 * steps);
      s.factor_at := s.factor_at + make_interval(secs => steps * p_ramp_ms / 1000.0);
    END IF;
  END IF;

  -- What was sent, per minute (two fixed minutes, read as a sliding one by the status).
  IF s.minute_start IS NULL OR p_now >= s.minute_start + interval '1 minute' THEN
    s.prev_minute_sent := CASE WHEN s.minute_start IS NOT NULL AND p_now < s.minute_start + interval '2 minutes' THEN s.minute_sent ELSE 0 END;
    s.minute_start := date_trunc('minute', p_now);
    s.minute_sent := 0;
  END IF;
  s.minute_sent := s.minute_sent + greatest(p_sent, 0);

  IF s.suspended_until IS NOT NULL AND s.suspended_until > p_now THEN
    granted := 0;
    retry := ceil(extract(epoch FROM s.suspended_until - p_now) * 1000);
  ELSE
    max_eff := greatest(1, floor(p_max_conns * f));
    SELECT coalesce(sum(l.connections), 0), coalesce(sum(l.wanted), 0), count(*) FILTER (WHERE l.wanted > 0)
      INTO others_held, others_wanted, others_n
      FROM delivery_leases l WHERE l.destination = p_dest AND l.source = p_source AND l.worker <> p_worker;
    -- At most what is free; and no more than a fair share while others want slots too.
    granted := greatest(0, least(p_want_conns, max_eff - others_held,
                                 greatest(ceil(max_eff::double precision / (1 + others_n))::integer, max_eff - others_wanted)));
    -- Tokens: a bucket of p_burst refilled at p_rate × factor per second; none without a limit.
    IF p_want_tokens > 0 THEN
      IF p_rate IS NULL THEN
        got := p_want_tokens;
      ELSE
        r := p_rate * f;
        t := least(p_burst::double precision, s.tokens + r * extract(epoch FROM greatest(p_now - s.tokens_at, interval '0')));
        got := greatest(0, least(p_want_tokens, floor(t)::integer));
        t := t - got;
        s.tokens := t;
        -- A call that waited for the lock may carry an earlier time than the last one: the
        -- bucket's time never goes back (it would refill the same interval twice).
        s.tokens_at := greatest(p_now, s.tokens_at);
        IF got < p_want_tokens THEN retry := ceil((1 - (t - floor(t))) / r * 1000); END IF;
      END IF;
      IF p_per_day IS NOT NULL THEN
        IF s.day_start IS NULL OR p_now >= s.day_start + interval '24 hours' THEN
          s.day_start := p_now;
          s.day_sent := 0;
        END IF;
        IF got > p_per_day - s.day_sent THEN
          -- Tokens the quota refuses go back to the bucket.
          s.tokens := s.tokens + (got - greatest(0, p_per_day - s.day_sent));
          got := greatest(0, p_per_day - s.day_sent);
          retry := greatest(retry, ceil(extract(epoch FROM s.day_start + interval '24 hours' - p_now) * 1000)::integer);
        END IF;
        s.day_sent := s.day_sent + got;
      END IF;
    END IF;
  END IF;

  UPDATE delivery_shaping d
     SET rate_factor = f, factor_at = s.factor_at, tokens = s.tokens, tokens_at = s.tokens_at,
         day_start = s.day_start, day_sent = s.day_sent, minute_start = s.minute_start,
         minute_sent = s.minute_sent, prev_minute_sent = s.prev_minute_sent, active_at = p_now
   WHERE d.destination = p_dest AND d.source = p_source;
  IF p_want_conns = 0 AND p_open = 0 AND p_in_flight = 0 THEN
    DELETE FROM delivery_leases l WHERE l.destination = p_dest AND l.source = p_source AND l.worker = p_worker;
  ELSE
    INSERT INTO delivery_leases AS l (destination, source, worker, connections, wanted, in_flight, expires_at)
    VALUES (p_dest, p_source, p_worker, greatest(granted, p_open), p_want_conns, p_in_flight, p_now + make_interval(secs => p_lease_ms / 1000.0))
    ON CONFLICT (destination, source, worker) DO UPDATE
      SET connections = EXCLUDED.connections, wanted = EXCLUDED.wanted, in_flight = EXCLUDED.in_flight, expires_at = EXCLUDED.expires_at;
  END IF;
  RETURN QUERY SELECT granted, got, s.suspended_until, f, retry;
END;
$$;

-- A throttle reply: suspend the destination until p_until (never shortening a longer
-- suspension), and multiply its rate factor by p_decrease once per suspension (replies to
-- messages already in flight do not compound it); the climb back starts when it resumes.
-- The due queue of its domains (all pending mail for the relay) is parked until then, so the
-- claim does not walk it.
CREATE FUNCTION delivery_throttle(
  p_dest text, p_source text, p_provider text, p_now timestamptz, p_until timestamptz, p_reply text, p_decrease double precision
) RETURNS timestamptz
LANGUAGE plpgsql AS $$
DECLARE
  s delivery_shaping%ROWTYPE;
  v_until timestamptz;
BEGIN
  INSERT INTO delivery_shaping (destination, source, provider, factor_at, tokens, tokens_at, active_at)
  VALUES (p_dest, p_source, p_provider, p_now, 0, p_now, p_now)
  ON CONFLICT DO NOTHING;
  SELECT * INTO s FROM delivery_shaping d WHERE d.destination = p_dest AND d.source = p_source FOR UPDATE;
  v_until := greatest(p_until, s.suspended_until);
  UPDATE delivery_shaping d
     SET suspended_until = v_until, last_throttle_reply = left(p_reply, 1000), last_throttle_at = p_now,
         rate_factor = CASE WHEN s.suspended_until IS NOT NULL AND s.suspended_until > p_now THEN s.rate_factor
                            ELSE greatest(0.05, s.rate_factor * p_decrease) END,
         factor_at = v_until, tokens = 0, tokens_at = v_until, active_at = p_now
   WHERE d.destination = p_dest AND d.source = p_source;
  IF p_dest = 'relay' THEN
    UPDATE messages SET next_attempt_at = v_until
     WHERE status IN ('queued', 'deferred') AND next_attempt_at < v_until;
  ELSE
    UPDATE messages SET next_attempt_at = v_until
     WHERE status IN ('queued', 'deferred') AND next_attempt_at < v_until
       AND to_domain IN (SELECT r.domain FROM delivery_routes r WHERE r.destination = p_dest);
  END IF;
  RETURN v_until;
END;
$$;
