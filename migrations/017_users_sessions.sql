-- Dashboard users: people who sign in with an email address and a password. Each belongs to
-- one account and sees what that account's API keys see. Emails are unique across the
-- installation because the sign-in form asks for no account.
CREATE TABLE users (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  email         text NOT NULL,               -- as given
  email_key     text NOT NULL UNIQUE,        -- lower-cased matching form
  password_hash text,                        -- argon2id PHC string; NULL until a password is set
  created_at    timestamptz NOT NULL DEFAULT now(),
  password_set_at timestamptz
);
CREATE INDEX users_account ON users (account_id, id);

-- Signed-in sessions. The cookie carries a random token; only its SHA-256 is stored, so a
-- database dump signs nobody in. The CSRF token is per session and sent back in a header.
CREATE TABLE sessions (
  token_hash   bytea PRIMARY KEY,
  user_id      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- One-time sign-in links (first start, `postline users reset-password --link`): single use,
-- short-lived, stored hashed.
CREATE TABLE sign_in_links (
  token_hash bytea PRIMARY KEY,
  user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

-- Failed sign-ins counted per bucket ("email:<key>" or "ip:<address>") in fixed windows,
-- shared by every API process.
CREATE TABLE sign_in_failures (
  bucket       text NOT NULL,
  window_start timestamptz NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
