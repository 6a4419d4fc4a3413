-- What comes back: complaint (ARF) reports and mail to our bounce addresses
-- (docs/architecture.md#complaints-and-bounces-coming-back, docs/complaints-and-bounces.md). Everything received is kept with its raw
-- bytes, matched or not, parseable or not: a report we could not use today is evidence a
-- human (or a later fix) can still act on.

-- Every complaint report, from POST /api/fbl/inbound ('http') or mail to fbl@ ('smtp').
-- matched_by says which evidence tied it to a message; event_id is the spam event it caused,
-- NULL when it caused none (unmatched, unparseable, not a complaint type such as not-spam,
-- or a repeat complaint about a message that already has one).
CREATE TABLE fbl_reports (
  id                  text PRIMARY KEY,            -- rpt_…, time-ordered
  received_at         timestamptz NOT NULL,
  source              text NOT NULL CHECK (source IN ('http', 'smtp')),
  raw                 bytea NOT NULL,
  feedback_type       text,                        -- NULL when unparseable
  user_agent          text,
  original_message_id text,                        -- the original's Message-ID as reported
  matched             boolean NOT NULL,
  matched_by          text CHECK (matched_by IN ('message_id', 'return_path', 'address')),
  message_id          text,                        -- our msg_… when matched
  account_id          text REFERENCES accounts(id) ON DELETE CASCADE,
  email               text,                        -- the complaining address (reported, or the message's)
  event_id            text,
  parse_error         text,
  CHECK (matched = (message_id IS NOT NULL))
);
CREATE INDEX fbl_reports_received ON fbl_reports (received_at);
CREATE INDEX fbl_reports_account ON fbl_reports (account_id, id) WHERE account_id IS NOT NULL;
CREATE INDEX fbl_reports_message ON fbl_reports (message_id) WHERE message_id IS NOT NULL;

-- Mail received by the inbound SMTP listener for VERP addresses (DSNs, mailto unsubscribes,
-- auto-replies). kind is what we made of it; message_id the message its VERP address named.
CREATE TABLE inbound_messages (
  id            text PRIMARY KEY,                  -- rpt_…, time-ordered
  received_at   timestamptz NOT NULL,
  envelope_from text NOT NULL,                     -- '' for the null sender of DSNs
  envelope_to   text NOT NULL,                     -- the VERP address it was accepted for
  raw           bytea NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('dsn', 'unsubscribe', 'other')),
  message_id    text,
  account_id    text REFERENCES accounts(id) ON DELETE CASCADE,
  parse_error   text                             -- why a multipart/report was not read as a DSN
);
CREATE INDEX inbound_messages_received ON inbound_messages (received_at);
CREATE INDEX inbound_messages_message ON inbound_messages (message_id) WHERE message_id IS NOT NULL;

-- One row per recipient a DSN reports on, as the DSN said it, and what we did with it.
CREATE TABLE bounce_reports (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  inbound_id         text NOT NULL REFERENCES inbound_messages(id) ON DELETE CASCADE,
  message_id         text,
  account_id         text REFERENCES accounts(id) ON DELETE CASCADE,
  final_recipient    text NOT NULL,
  original_recipient text,
  action             text,
  status             text,                        -- enhanced code, e.g. 5.1.1
  diagnostic_code    text,
  remote_mta         text,
  classification     text NOT NULL CHECK (classification IN ('hard', 'soft', 'delivered', 'other')),
  email              text,                        -- the message's address it was attributed to; NULL = none
  event_id           text                         -- the event it caused, NULL when none
);
CREATE INDEX bounce_reports_inbound ON bounce_reports (inbound_id);
CREATE INDEX bounce_reports_message ON bounce_reports (message_id) WHERE message_id IS NOT NULL;

-- Complaint matching by address looks for the most recent message to an address across all
-- accounts (latestMessageTo without an account): messages_account_to leads with account_id
-- and cannot serve it, so without this every address-matched report scans messages.
CREATE INDEX messages_to_latest ON messages (lower(to_email), created_at DESC);
