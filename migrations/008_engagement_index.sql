-- Engagement segments ("opened within 30 days", "not received within 60 days") scan events
-- of one type for one account over a time range and only need the address: an index-only scan.
CREATE INDEX events_account_type_time ON events (account_id, type, occurred_at) INCLUDE (email);
