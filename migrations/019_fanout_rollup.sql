-- The campaign fan-out writes the counters of its `sent` events itself, once per batch (one
-- upsert of campaign_stats and one of stats_daily: src/db/queries/campaigns/fanout.ts), in the
-- batch's transaction. Rolling up its 1,000-event statements through events_rollup cost a
-- join of every event to its message, a window sort and the grouped upserts: about 15 % of a
-- batch's time (docs/benchmarks.md). The fan-out says so by setting the transaction-local
-- setting postline.events_rollup to 'by_caller' around its insert; every other insert into
-- events (delivery, tracking, bounces, …) never sets it and is rolled up as before.
DROP TRIGGER events_rollup ON events;
CREATE TRIGGER events_rollup AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT WHEN (current_setting('postline.events_rollup', true) IS DISTINCT FROM 'by_caller')
  EXECUTE FUNCTION events_rollup();
