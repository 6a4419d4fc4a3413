-- Every envelope recipient of a send (to, each cc, each bcc) is its own message row and so its
-- own delivery job, with its own status, attempts, events, VERP return path, tracking links
-- and bounces (docs/decisions/0011-one-row-per-recipient.md). The rows of one send share:
--   group_id     the id the API returned for the send (the `to` row's own id); NULL on rows
--                written before this migration or by paths that send to one recipient only,
--                which are their own group.
--   recipient_type  'to', 'cc' or 'bcc' (NULL = 'to'). A bcc row never appears in any header.
--   header_to    the To header of the send when this row's recipient is a cc or bcc; NULL
--                means the row's own to_email is the To header.
-- Content is stored once, on the group's `to` row: cc/bcc rows keep html, text and
-- attachments empty and the queries read them from the group row.
-- Nullable, no defaults: insertAcceptedMessages fills rows with json_populate_recordset and
-- other writers may leave them out.
ALTER TABLE messages ADD COLUMN group_id text;
ALTER TABLE messages ADD COLUMN recipient_type text CHECK (recipient_type IN ('to', 'cc', 'bcc'));
ALTER TABLE messages ADD COLUMN header_to text;
-- A recipient of a send that is on the suppression list gets a row too (status 'suppressed',
-- never claimed), so the send shows what happened to every address it named.
ALTER TABLE messages DROP CONSTRAINT messages_status_check;
ALTER TABLE messages ADD CONSTRAINT messages_status_check
  CHECK (status IN ('queued', 'scheduled', 'sending', 'delivered', 'deferred', 'bounced', 'failed', 'suppressed'));
-- GET /emails/{id} lists the rows of a group.
CREATE INDEX messages_group ON messages (group_id) WHERE group_id IS NOT NULL;
