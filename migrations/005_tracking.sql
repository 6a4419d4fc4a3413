-- Tracking endpoints (docs/tracking.md).
--
-- At most one open per message is its first ("unique") open. The unique partial index makes
-- that a database fact rather than a check-then-insert race: the pixel handler inserts its
-- open as the first one with ON CONFLICT DO NOTHING and, when another request got there
-- first, as a repeat (src/db/queries/tracking.ts). One entry per opened message, so the
-- index stays small and the hot event types (sent, delivered, click) never touch it.
CREATE UNIQUE INDEX events_first_open ON events (message_id) WHERE type = 'open' AND (data->>'unique') = 'true';

-- "Has this message's unsubscribe already been recorded?" on every one-click POST.
CREATE INDEX events_message_unsubscribe ON events (message_id) WHERE type = 'unsubscribe';
