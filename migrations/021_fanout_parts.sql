-- A campaign's fan-out in parts (docs/decisions/0019): the audience split into ranges of
-- subscriber ids when the fan-out starts, each range its own job with its own checkpoint and
-- lease, so several workers fan one campaign out at once. A part's batches commit with its
-- checkpoint; the campaign row keeps the counters (added by every part's batches) and
-- `fanout_done`, set by the batch that finishes the last part. A finished part is deleted.
CREATE TABLE campaign_fanout_parts (
  campaign_id        text NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  part               integer NOT NULL,
  last_subscriber_id text NOT NULL,     -- checkpoint: the range's subscribers up to here are done ('' = from the first)
  upto_id            text,              -- the range's last subscriber id; NULL = to the end of the audience
  locked_by          text,
  locked_until       timestamptz,
  PRIMARY KEY (campaign_id, part)
);

-- A fan-out under way continues as one part from its checkpoint.
INSERT INTO campaign_fanout_parts (campaign_id, part, last_subscriber_id, locked_by, locked_until)
SELECT id, 0, last_subscriber_id, locked_by, locked_until
  FROM campaigns WHERE status IN ('sending', 'paused') AND NOT fanout_done AND last_subscriber_id IS NOT NULL;

ALTER TABLE campaigns DROP COLUMN last_subscriber_id, DROP COLUMN locked_by, DROP COLUMN locked_until;
