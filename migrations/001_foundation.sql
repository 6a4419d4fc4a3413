-- Accounts own everything; API keys belong to accounts.
CREATE TABLE accounts (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  monthly_quota integer,                    -- NULL = unlimited
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  account_id   text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  mode         text NOT NULL CHECK (mode IN ('live', 'test')),
  name         text,
  prefix       text NOT NULL,               -- shown in lists: "sk_live_AbCd…"
  key_hash     bytea NOT NULL UNIQUE,       -- SHA-256 of the full key; the key itself is never stored
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id, id);

-- Fixed one-minute windows, shared by every API process. bucket = "<account>:<mode>".
CREATE TABLE rate_limit_windows (
  bucket       text NOT NULL,
  window_start timestamptz NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (bucket, window_start)
);

-- Idempotency-Key records: the first response to a (account, key) pair, replayed for 24 h.
CREATE TABLE idempotency_keys (
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  key           text NOT NULL,
  request_hash  bytea NOT NULL,             -- SHA-256 of method, path and body
  status_code   integer,                    -- NULL while the first request is in flight
  response_body text,
  content_type  text,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
