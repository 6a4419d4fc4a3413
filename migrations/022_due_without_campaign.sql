-- Due messages that belong to no campaign (transactional, automations, confirmations): what a
-- worker still delivers while it fans a campaign out (docs/campaigns.md, "Fan-out and
-- delivery"). Without it that claim would walk messages_due past every due campaign message.
-- Campaign rows are not in it, so the fan-out's inserts do not maintain it.
CREATE INDEX messages_due_without_campaign ON messages (next_attempt_at)
  WHERE campaign_id IS NULL AND status IN ('queued', 'scheduled', 'deferred', 'sending');
