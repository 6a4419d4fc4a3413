-- Sender domains: DKIM keys (private keys encrypted with POSTLINE_SECRET), verification state,
-- and the white-label tracking CNAME state.
CREATE TABLE domains (
  id                  text PRIMARY KEY,
  account_id          text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name                text NOT NULL,                  -- lower-case
  status              text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified')),
  rsa_selector        text NOT NULL,
  rsa_private_key     text NOT NULL,                  -- AES-256-GCM ciphertext
  rsa_public_txt      text NOT NULL,
  ed_selector         text NOT NULL,
  ed_private_key      text NOT NULL,
  ed_public_txt       text NOT NULL,
  record_status       jsonb NOT NULL DEFAULT '{}',    -- last check result per record
  verified_at         timestamptz,
  checked_at          timestamptz,
  tracking_status     text NOT NULL DEFAULT 'pending' CHECK (tracking_status IN ('pending', 'verified', 'failed')),
  tracking_checked_at timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, name)
);

-- A message row is also its delivery job: the worker claims rows whose next_attempt_at is
-- due with FOR UPDATE SKIP LOCKED. While a worker holds one, status is 'sending' and
-- next_attempt_at is the lease expiry, so a crashed worker's messages become due again.
CREATE TABLE messages (
  id              text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  domain_id       text REFERENCES domains(id) ON DELETE SET NULL,
  status          text NOT NULL CHECK (status IN ('queued', 'scheduled', 'sending', 'delivered', 'deferred', 'bounced', 'failed')),
  from_email      text NOT NULL,
  from_name       text,
  to_email        text NOT NULL,
  to_domain       text NOT NULL,                      -- lower-case; delivery groups by it
  cc              jsonb NOT NULL DEFAULT '[]',
  bcc             jsonb NOT NULL DEFAULT '[]',
  reply_to        text,
  subject         text NOT NULL,
  html            text,
  text            text,
  headers         jsonb NOT NULL DEFAULT '{}',
  attachments     jsonb NOT NULL DEFAULT '[]',
  tags            text[] NOT NULL DEFAULT '{}',
  template_id     text,
  campaign_id     text,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  first_attempt_at timestamptz,
  last_response   text,
  last_mx         text,
  locked_by       text,
  scheduled_at    timestamptz,
  delivered_at    timestamptz,
  created_at      timestamptz NOT NULL
);
CREATE INDEX messages_due ON messages (next_attempt_at) WHERE status IN ('queued', 'scheduled', 'deferred', 'sending');
CREATE INDEX messages_account ON messages (account_id, id);
CREATE INDEX messages_account_to ON messages (account_id, lower(to_email), id);

-- Accepted live messages per account and calendar month (UTC), for the plan quota.
CREATE TABLE usage_counters (
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  month      date NOT NULL,
  sent       integer NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, month)
);

-- Every email event, written in the same transaction as the change it describes (the
-- outbox the webhook dispatcher reads). seq orders events by commit-safe insertion.
CREATE TABLE events (
  seq         bigint GENERATED ALWAYS AS IDENTITY,
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  message_id  text,
  type        text NOT NULL CHECK (type IN ('sent', 'delivered', 'open', 'click', 'hard_bounce', 'soft_bounce', 'spam', 'unsubscribe', 'deferred')),
  email       text NOT NULL,
  url         text,
  data        jsonb NOT NULL DEFAULT '{}',
  occurred_at timestamptz NOT NULL
);
CREATE INDEX events_message ON events (message_id, occurred_at);
CREATE INDEX events_account_seq ON events (account_id, seq);
-- Engagement segments ("opened within 30 days") look events up by address and type.
CREATE INDEX events_engagement ON events (account_id, lower(email), type, occurred_at);

-- POSTLINE_DELIVERY=capture: the exact bytes that would have been sent, kept locally.
CREATE TABLE captured_messages (
  id            text PRIMARY KEY,                    -- the message id
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  envelope_from text NOT NULL,
  envelope_to   text NOT NULL,
  subject       text NOT NULL,
  raw           bytea NOT NULL,
  captured_at   timestamptz NOT NULL
);
CREATE INDEX captured_messages_account ON captured_messages (account_id, id);
