-- Automations, second part (docs/automations.md): trigger work queued by bulk writes, and
-- machine opens kept apart from opens by people.

-- Triggers that a bulk write (a subscriber import) owes, queued in the transaction of the
-- write: an import of N new subscribers adds N rows here with one statement per batch, and
-- the worker starts their runs afterwards in batches (src/domain/automations/pending.ts),
-- so the import neither slows down to a trigger per row nor loses one if a process dies.
CREATE TABLE automation_pending_triggers (
  seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  event      text NOT NULL,
  email      text NOT NULL,
  data       jsonb NOT NULL DEFAULT '{}',
  queued_at  timestamptz NOT NULL
);
ALTER TABLE automation_pending_triggers SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);

-- Opens made by machines (Apple Mail Privacy Protection, Gmail's prefetch: classifyOpener in
-- src/domain/tracking.ts sets data.machine) are no longer queued: they neither fire
-- email.opened nor mark an automation send opened (counters, the `opened` condition). Such a
-- proxy fetches every image when the message arrives, so it says nothing about the person.
CREATE OR REPLACE FUNCTION enqueue_events_for_automations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO automation_event_queue (event_seq, account_id, type, email, message_id, url, occurred_at)
  SELECT e.seq, e.account_id, e.type, e.email, e.message_id, e.url, e.occurred_at
    FROM new_events e
   WHERE e.type IN ('delivered', 'open', 'click')
     AND NOT (e.type = 'open' AND coalesce(e.data->>'machine', '') = 'true')
     AND (EXISTS (SELECT 1 FROM automation_sends s WHERE s.message_id = e.message_id)
          OR (e.type IN ('open', 'click') AND EXISTS (SELECT 1 FROM automations a WHERE a.account_id = e.account_id)));
  RETURN NULL;
END
$$;
