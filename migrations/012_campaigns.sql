-- Campaigns (docs/campaigns.md, docs/decisions/0012-campaigns.md).
--
-- A campaign row is also its fan-out job, like an import row is its import job: a worker
-- claims a 'sending' campaign whose fan-out is unfinished and whose lease is free or expired
-- (FOR UPDATE SKIP LOCKED), and every batch of messages commits together with the advanced
-- checkpoint (last_subscriber_id) and the counters, so a crash resumes at the next batch.
CREATE TABLE campaigns (
  id                 text PRIMARY KEY,                 -- cmp_…, time-ordered: the keyset cursor
  account_id         text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name               text NOT NULL,
  status             text NOT NULL CHECK (status IN ('draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled')),
  subject            text,
  from_email         text NOT NULL,
  from_name          text,
  reply_to           text,
  html               text,                             -- the one stored copy of the content
  text               text,
  template_id        text,
  variables          jsonb NOT NULL DEFAULT '{}',
  audience           jsonb NOT NULL,                   -- {lists, segment?, excludeLists}
  tags               text[] NOT NULL DEFAULT '{}',
  headers            jsonb NOT NULL DEFAULT '{}',
  scheduled_at       timestamptz,
  throttle           integer,                          -- messages per minute; NULL = as fast as delivery goes
  domain_id          text REFERENCES domains(id) ON DELETE SET NULL,
  pause_reason       text,
  -- fan-out job state
  fanout_done        boolean NOT NULL DEFAULT false,
  last_subscriber_id text,                             -- checkpoint: subscribers up to here are done
  locked_by          text,
  locked_until       timestamptz,
  -- progress, written with each batch
  audience_size      integer,                          -- counted when the campaign is sent
  queued             integer NOT NULL DEFAULT 0,       -- messages written
  cancelled          integer NOT NULL DEFAULT 0,       -- unsent messages removed by cancel
  skipped_suppressed   integer NOT NULL DEFAULT 0,
  skipped_unsubscribed integer NOT NULL DEFAULT 0,
  skipped_bounced      integer NOT NULL DEFAULT 0,
  skipped_complained   integer NOT NULL DEFAULT 0,
  skipped_duplicate    integer NOT NULL DEFAULT 0,
  throttle_next_at   timestamptz,                      -- the next free delivery slot under the throttle
  send_requested_at  timestamptz,
  started_at         timestamptz,
  finished_at        timestamptz,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL
);
CREATE INDEX campaigns_account ON campaigns (account_id, id);
CREATE INDEX campaigns_account_status ON campaigns (account_id, status, id);
-- The fan-out loop's claim and the scheduler's "due" scan: few rows, all unfinished.
CREATE INDEX campaigns_active ON campaigns (scheduled_at) WHERE status IN ('scheduled', 'sending', 'paused');

-- Campaign messages hold their recipient and merge data, not their content: the delivery
-- engine renders the campaign's single stored copy per recipient when it builds the message.
-- Nullable, no defaults: insertAcceptedMessages fills rows with json_populate_recordset.
ALTER TABLE messages ADD COLUMN subscriber_id text;
ALTER TABLE messages ADD COLUMN merge_data jsonb;
-- First open and first click of the message, set by the events rollup (migration 013): the
-- race-free arbiter of unique clicks, and the per-recipient view without reading events.
ALTER TABLE messages ADD COLUMN opened_at timestamptz;
ALTER TABLE messages ADD COLUMN clicked_at timestamptz;

-- 'held': a message of a paused campaign. Not in messages_due, so no worker claims it.
ALTER TABLE messages DROP CONSTRAINT messages_status_check;
ALTER TABLE messages ADD CONSTRAINT messages_status_check
  CHECK (status IN ('queued', 'scheduled', 'sending', 'delivered', 'deferred', 'bounced', 'failed', 'suppressed', 'held'));

-- One message per subscriber and campaign, as a database fact: even a fan-out batch run twice
-- (a lease taken over while the first holder still runs) cannot send anyone a second copy.
-- Also the recipients page of a campaign (keyset on subscriber id).
CREATE UNIQUE INDEX messages_campaign_subscriber ON messages (campaign_id, subscriber_id) WHERE campaign_id IS NOT NULL;
-- Unsent messages of a campaign: pause, resume, cancel and "is everything sent?" touch only these.
CREATE INDEX messages_campaign_pending ON messages (campaign_id, id)
  WHERE campaign_id IS NOT NULL AND status IN ('queued', 'scheduled', 'sending', 'deferred', 'held');

-- Events of campaign messages carry their campaign (webhook items get `campaignId`).
ALTER TABLE events ADD COLUMN campaign_id text;

-- Filled from the message when the inserter did not set it: one primary-key lookup per event
-- with a message, so every path that records events (delivery, tracking, bounces, complaints,
-- unsubscribes) tags campaign events without knowing about campaigns.
CREATE FUNCTION events_set_campaign() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.campaign_id IS NULL AND NEW.message_id IS NOT NULL THEN
    SELECT m.campaign_id INTO NEW.campaign_id FROM messages m WHERE m.id = NEW.message_id;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER events_campaign BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_set_campaign();
