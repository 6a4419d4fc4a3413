-- Email templates, grouped in folders. subject/html/text hold template-language source
-- (docs/templates.md), checked for syntax on every save; NULL = that part is absent.
CREATE TABLE templates (
  id         text PRIMARY KEY,                 -- tpl_…, time-ordered: the list's keyset cursor
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name       text NOT NULL,
  folder     text,                             -- NULL = not in a folder; never ''
  subject    text,
  html       text,
  text       text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX templates_account ON templates (account_id, id);
-- The folder filter and the folder counts.
CREATE INDEX templates_account_folder ON templates (account_id, folder, id);

-- The suppression list: addresses an account must not send to. One row per address and
-- account; email is kept as given, email_key (lower-cased local part @ lower-cased ASCII
-- domain, see src/domain/email-address.ts) is what sending and the API match on.
CREATE TABLE suppressions (
  id         text PRIMARY KEY,                 -- sup_…, time-ordered: the list's keyset cursor
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  email      text NOT NULL,
  email_key  text NOT NULL,
  reason     text NOT NULL CHECK (reason IN ('manual', 'unsubscribe', 'hard_bounce', 'complaint', 'import')),
  detail     text,                             -- e.g. the SMTP response of a hard bounce
  created_at timestamptz NOT NULL,
  UNIQUE (account_id, email_key)               -- also the index of the send-time check
);
CREATE INDEX suppressions_account ON suppressions (account_id, id);
CREATE INDEX suppressions_account_reason ON suppressions (account_id, reason, id);
