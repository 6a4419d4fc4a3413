-- Bounce reasons (docs/bounces.md): every failure is classified by the bounce taxonomy, and
-- only a dead address is suppressed. The suppression entry keeps the reason that put it
-- there; each bounce-report row keeps its reason; mail coming back to a return path is kept
-- with what it turned out to be (bounce, delivered notice, auto-reply, …).

-- The taxonomy reason of a hard_bounce suppression (user_unknown, host_unknown, …); NULL for
-- other suppression reasons and for entries made before reasons existed.
ALTER TABLE suppressions ADD COLUMN bounce_reason text;

ALTER TABLE bounce_reports
  ADD COLUMN reason text,                      -- the taxonomy reason; NULL for delivered notices
  ADD COLUMN reply_code integer,               -- the SMTP reply code found in the diagnostic
  ADD COLUMN dead boolean NOT NULL DEFAULT false;

-- 'dsn' meant "a bounce"; bounces now come in any format, so the kind says what, not how.
ALTER TABLE inbound_messages DROP CONSTRAINT inbound_messages_kind_check;
UPDATE inbound_messages SET kind = 'bounce' WHERE kind = 'dsn';
ALTER TABLE inbound_messages
  ADD CONSTRAINT inbound_messages_kind_check CHECK (kind IN ('bounce', 'delivered', 'auto_reply', 'unsubscribe', 'other')),
  ADD COLUMN format text;                      -- how it was read: rfc3464, rfc3464-text, text, mdn, none
