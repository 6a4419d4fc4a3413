-- Per-message tracking switches (docs/tracking.md, "Turning tracking off"): a send may ask for
-- no open pixel, no click rewriting, or neither (the API's `tracking`, SMTP submission's
-- X-Postline-Track header). NULL means tracked: rows written before this migration and the
-- campaign fan-out's rows, which are always tracked. The unsubscribe footer and
-- List-Unsubscribe are not switched: every message carries them.
ALTER TABLE messages ADD COLUMN track_opens boolean;
ALTER TABLE messages ADD COLUMN track_clicks boolean;
