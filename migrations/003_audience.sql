-- Audience: lists, subscribers, their memberships, segments, double opt-in confirmations
-- waiting for the mailer, and subscriber imports (docs/audience.md).

CREATE TABLE lists (
  id                       text PRIMARY KEY,      -- lst_…, time-ordered: the keyset cursor
  account_id               text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name                     text NOT NULL,
  description              text,
  double_opt_in            boolean NOT NULL DEFAULT false,
  confirmation_template_id text,                  -- overrides the built-in confirmation mail
  created_at               timestamptz NOT NULL,
  updated_at               timestamptz NOT NULL
);
CREATE INDEX lists_account ON lists (account_id, id);

-- One subscriber per address and account. email is kept as given; email_key (lower-cased
-- local part @ lower-cased ASCII domain, src/domain/email-address.ts) is what we match on,
-- the same key as suppressions.email_key.
CREATE TABLE subscribers (
  id         text PRIMARY KEY,                    -- sub_…, time-ordered, never reused
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  email      text NOT NULL,
  email_key  text NOT NULL,
  -- lower(email), computed once per write: segment conditions on the address and the join to
  -- events (whose index is on lower(email)) read it for every subscriber of a count.
  email_lower text GENERATED ALWAYS AS (lower(email)) STORED,
  name       text,
  status     text NOT NULL CHECK (status IN ('active', 'unconfirmed', 'unsubscribed', 'bounced', 'complained')),
  attributes jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(attributes) = 'object'),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (account_id, email_key)                  -- the upsert target and the lookup by email
);
-- Keyset pages of an account (order by id) and every segment count's scan of one account.
CREATE INDEX subscribers_account ON subscribers (account_id, id);
CREATE INDEX subscribers_account_status ON subscribers (account_id, status, id);
-- Engagement conditions join events on lower(email), the expression events_engagement indexes.
CREATE INDEX subscribers_account_email_lower ON subscribers (account_id, email_lower);

-- Membership. Keyed list-first so a list's page is an index range ordered by subscriber id
-- (the same keyset as the unfiltered page); the second index serves "lists of a subscriber".
CREATE TABLE subscriber_lists (
  list_id       text NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
  subscriber_id text NOT NULL REFERENCES subscribers(id) ON DELETE CASCADE,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (list_id, subscriber_id)
);
CREATE INDEX subscriber_lists_subscriber ON subscriber_lists (subscriber_id, list_id);

CREATE TABLE segments (
  id         text PRIMARY KEY,                    -- seg_…
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name       text NOT NULL,
  match      text NOT NULL CHECK (match IN ('all', 'any')),
  conditions jsonb NOT NULL,                      -- validated tree; compiled to SQL per query
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX segments_account ON segments (account_id, id);

-- Double opt-in outbox: one row per confirmation mail to send, written in the transaction that
-- made the subscriber an unconfirmed member of a double opt-in list. The mailer claims unsent
-- rows with FOR UPDATE SKIP LOCKED and sets sent_at in the transaction that queues the message.
CREATE TABLE subscriber_confirmations (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  subscriber_id text NOT NULL REFERENCES subscribers(id) ON DELETE CASCADE,
  list_id       text NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL,
  sent_at       timestamptz,
  message_id    text
);
CREATE INDEX subscriber_confirmations_pending ON subscriber_confirmations (id) WHERE sent_at IS NULL;
CREATE INDEX subscriber_confirmations_subscriber ON subscriber_confirmations (subscriber_id, list_id, created_at);

-- An import row is also its job (like a message row is its delivery job): a worker claims a
-- queued or lease-expired row with FOR UPDATE SKIP LOCKED, and every batch commits its
-- subscribers together with the advanced checkpoint, so a crash resumes at the next batch.
CREATE TABLE subscriber_imports (
  id           text PRIMARY KEY,                  -- imp_…
  account_id   text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  list_id      text REFERENCES lists(id) ON DELETE SET NULL,
  status       text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  total        integer NOT NULL,
  checkpoint   integer NOT NULL DEFAULT 0,        -- rows done (payload index of the next row)
  created      integer NOT NULL DEFAULT 0,
  updated      integer NOT NULL DEFAULT 0,
  skipped      integer NOT NULL DEFAULT 0,
  error_count  integer NOT NULL DEFAULT 0,
  errors       jsonb NOT NULL DEFAULT '[]',       -- [{row, email?, message}], the first 1,000
  payload      text,                              -- JSON array of rows; NULL once finished
  attempts     integer NOT NULL DEFAULT 0,
  locked_by    text,
  locked_until timestamptz,                       -- lease; an expired lease is claimable again
  failure      text,
  created_at   timestamptz NOT NULL,
  started_at   timestamptz,
  finished_at  timestamptz
);
CREATE INDEX subscriber_imports_account ON subscriber_imports (account_id, id);
CREATE INDEX subscriber_imports_pending ON subscriber_imports (id) WHERE status IN ('queued', 'running');

-- Typed reads of free-form attribute values for segment comparisons: NULL instead of an error
-- when a value is not a number / not an ISO 8601 date, so one odd row never fails a count.
-- The date guard is two substr() calls rather than a regex: measured, a regex per row cost more
-- than the parse. Validity is always the cast's own verdict, chosen by server version
-- (docs/decisions/0028-postgresql-versions.md): PostgreSQL 16+ asks pg_input_is_valid, which
-- checks without a subtransaction; on 15 the cast runs in a PL/pgSQL block that catches its
-- error (a subtransaction per value, measured slower; and PARALLEL UNSAFE, since a parallel
-- worker cannot start a subtransaction). test/audience/typed-reads.test.ts proves both give
-- the same answers.
CREATE FUNCTION audience_try_numeric(v text) RETURNS numeric
  LANGUAGE plpgsql STABLE PARALLEL UNSAFE
  AS $$ BEGIN RETURN v::numeric; EXCEPTION WHEN data_exception THEN RETURN NULL; END $$;

CREATE FUNCTION audience_try_timestamptz(v text) RETURNS timestamptz
  LANGUAGE plpgsql STABLE PARALLEL UNSAFE
  AS $$ BEGIN RETURN v::timestamptz; EXCEPTION WHEN data_exception THEN RETURN NULL; END $$;

DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 160000 THEN
    EXECUTE $f$CREATE FUNCTION audience_numeric(v text) RETURNS numeric
      LANGUAGE sql STABLE PARALLEL SAFE
      AS 'SELECT CASE WHEN pg_input_is_valid(v, ''numeric'') THEN v::numeric END'$f$;
    EXECUTE $f$CREATE FUNCTION audience_timestamptz(v text) RETURNS timestamptz
      LANGUAGE sql STABLE PARALLEL SAFE
      AS 'SELECT CASE WHEN substr(v, 5, 1) = ''-'' AND substr(v, 8, 1) = ''-'' AND pg_input_is_valid(v, ''timestamptz'') THEN v::timestamptz END'$f$;
  ELSE
    CREATE FUNCTION audience_numeric(v text) RETURNS numeric
      LANGUAGE sql STABLE PARALLEL UNSAFE
      AS 'SELECT audience_try_numeric(v)';
    CREATE FUNCTION audience_timestamptz(v text) RETURNS timestamptz
      LANGUAGE sql STABLE PARALLEL UNSAFE
      AS 'SELECT CASE WHEN substr(v, 5, 1) = ''-'' AND substr(v, 8, 1) = ''-'' THEN audience_try_timestamptz(v) END';
  END IF;
END $$;
