-- A strict campaign refuses to send when a placeholder has no value and no fallback for its
-- audience (docs/campaigns.md, "Strict campaigns"); off by default, as before.
ALTER TABLE campaigns ADD COLUMN strict boolean NOT NULL DEFAULT false;
