-- The statements that write their events' counters themselves (postline.events_rollup =
-- 'by_caller', migration 019: the accept, the campaign fan-out and the delivery outcome
-- record) also give each event its message's campaign themselves: the fan-out and the outcome
-- record write the message's campaign_id into the event, and the accept's messages have none.
-- The row trigger of migration 012 then looked the message up again for each of their events
-- (a PL/pgSQL call and a query per event, ~10-15 % of the outcome record's time): it is no
-- longer called for them. Every other insert (tracking, bounces and complaints, tests) is given
-- the campaign by the trigger as before.
DROP TRIGGER events_campaign ON events;
CREATE TRIGGER events_campaign BEFORE INSERT ON events FOR EACH ROW
  WHEN (NEW.campaign_id IS NULL AND NEW.message_id IS NOT NULL
        AND current_setting('postline.events_rollup', true) IS DISTINCT FROM 'by_caller')
  EXECUTE FUNCTION events_set_campaign();
