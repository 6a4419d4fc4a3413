-- Sending identity (docs/sending-identity.md). An account may send through pools of its own
-- instead of its streams' default pools (NULL: the stream's pool). Pool names live in the
-- delivery policy file, not here, so they are plain text.
ALTER TABLE accounts
  ADD COLUMN pool_transactional text,
  ADD COLUMN pool_broadcast     text;

-- The source address a message left from, for its API view and for support ("which IP sent
-- this?"). NULL: no sources configured, or not sent yet.
ALTER TABLE messages
  ADD COLUMN source_name    text,
  ADD COLUMN source_address text;

-- The start-up forward-confirmed reverse DNS check of each source, as the last process to
-- start saw it: the dashboard shows it, a mismatch is a warning, never a refusal.
CREATE TABLE source_checks (
  name          text PRIMARY KEY,
  address       text NOT NULL,
  ehlo          text NOT NULL,
  forward       text[] NOT NULL,      -- addresses the EHLO name resolves to
  reverse       text[] NOT NULL,      -- names the address's PTR records give
  ok            boolean NOT NULL,
  warning       text,
  checked_at    timestamptz NOT NULL
);
