-- Event-driven automations (docs/automations.md, docs/decisions/0014-automation-runs.md).

-- A definition. steps is the validated step tree (src/domain/automations/definition.ts).
CREATE TABLE automations (
  id             text PRIMARY KEY,                  -- aut_…, time-ordered: the keyset cursor
  account_id     text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name           text NOT NULL,
  status         text NOT NULL CHECK (status IN ('active', 'paused')),
  trigger_event  text NOT NULL,
  trigger_filter jsonb,                             -- a rule {match, conditions} or NULL
  steps          jsonb NOT NULL,
  reentry        text NOT NULL CHECK (reentry IN ('never', 'after_exit', 'always')),
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
CREATE INDEX automations_account ON automations (account_id, id);
-- A trigger looks up the account's active automations for one event name.
CREATE INDEX automations_trigger ON automations (account_id, trigger_event) WHERE status = 'active';

-- Run counters, maintained in the transactions that start and finish runs, so GET
-- /automations/{id} reads them without counting runs. Striped: each transaction adds to one
-- of 8 rows picked at random, so concurrent triggers of one automation do not queue on one
-- row lock until commit; reads sum the stripes.
CREATE TABLE automation_counters (
  automation_id text NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
  slot          smallint NOT NULL,
  started       bigint NOT NULL DEFAULT 0,
  completed     bigint NOT NULL DEFAULT 0,
  exited        bigint NOT NULL DEFAULT 0,
  failed        bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (automation_id, slot)
);

-- A run: one address going through one automation. The row is also the run's job: due_at is
-- when the engine must look at it next (now for a run with steps to perform, the wake-up time
-- of a wait), NULL once it is finished. The engine claims due rows with FOR UPDATE SKIP
-- LOCKED and performs their steps in the same transaction, so a worker killed mid-step rolls
-- back and the run is claimed again, from the same position, by the next worker.
-- position is the path of the step the run is at ("2", "3.then.0"): the next to perform, or
-- the wait it is in (status 'waiting').
CREATE TABLE automation_runs (
  id            text PRIMARY KEY,                   -- run_…
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  automation_id text NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
  email         text NOT NULL,
  email_key     text NOT NULL,
  data          jsonb NOT NULL DEFAULT '{}',
  status        text NOT NULL CHECK (status IN ('active', 'waiting', 'completed', 'exited', 'failed')),
  position      text NOT NULL,
  due_at        timestamptz,
  wait_event    text,                               -- waiting until this event (or due_at: timeout)
  wait_outcome  text CHECK (wait_outcome IN ('event', 'timeout')),
  exit_reason   text,
  started_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  finished_at   timestamptz
);
-- The engine's claim: due runs, earliest first.
CREATE INDEX automation_runs_due ON automation_runs (due_at) WHERE due_at IS NOT NULL;
-- Runs of an automation, newest first, optionally by status (GET /automations/{id}/runs).
CREATE INDEX automation_runs_automation ON automation_runs (automation_id, id);
-- Reentry checks and the unsubscribe exit: the runs of one address.
CREATE INDEX automation_runs_address ON automation_runs (account_id, email_key, automation_id);
-- A trigger wakes the runs of that address waiting for that event.
CREATE INDEX automation_runs_waiting ON automation_runs (account_id, email_key, wait_event) WHERE wait_event IS NOT NULL;
ALTER TABLE automation_runs SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);

-- A run's history: one row per step performed (and per wait resumed), with its outcome.
CREATE TABLE automation_run_steps (
  run_id     text NOT NULL REFERENCES automation_runs(id) ON DELETE CASCADE,
  seq        integer NOT NULL,
  path       text NOT NULL,
  type       text NOT NULL,
  outcome    text NOT NULL,
  detail     jsonb NOT NULL DEFAULT '{}',
  message_id text,
  at         timestamptz NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- Messages sent by send steps, to count their deliveries, opens and clicks once each and to
-- answer "did this run open / click its earlier send" in conditions.
CREATE TABLE automation_sends (
  message_id    text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  automation_id text NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
  run_id        text NOT NULL REFERENCES automation_runs(id) ON DELETE CASCADE,
  path          text NOT NULL,
  delivered_at  timestamptz,
  opened_at     timestamptz,
  clicked_at    timestamptz
);
CREATE INDEX automation_sends_run ON automation_sends (run_id);

-- Per send step counters (GET /automations/{id}).
CREATE TABLE automation_step_stats (
  automation_id text NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
  path          text NOT NULL,
  sent          bigint NOT NULL DEFAULT 0,
  skipped       bigint NOT NULL DEFAULT 0,
  delivered     bigint NOT NULL DEFAULT 0,
  opened        bigint NOT NULL DEFAULT 0,
  clicked       bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (automation_id, path)
);

-- Events the automation engine must see: deliveries, opens and clicks of automation sends
-- (counters), and opens and clicks in accounts that have automations (the built-in
-- email.opened / email.clicked triggers). Written by the trigger below in the transaction
-- that records the event, whichever code path records it; the worker deletes rows as it
-- handles them.
CREATE TABLE automation_event_queue (
  event_seq  bigint PRIMARY KEY,
  account_id text NOT NULL,
  type       text NOT NULL,
  email      text NOT NULL,
  message_id text,
  url        text,
  occurred_at timestamptz NOT NULL
);
ALTER TABLE automation_event_queue SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);

-- Statement-level, like the webhook fan-out: one join per batch of events. Sent, bounce and
-- other events never qualify, so the delivery engine's batches cost one cheap probe each.
CREATE FUNCTION enqueue_events_for_automations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO automation_event_queue (event_seq, account_id, type, email, message_id, url, occurred_at)
  SELECT e.seq, e.account_id, e.type, e.email, e.message_id, e.url, e.occurred_at
    FROM new_events e
   WHERE e.type IN ('delivered', 'open', 'click')
     AND (EXISTS (SELECT 1 FROM automation_sends s WHERE s.message_id = e.message_id)
          OR (e.type IN ('open', 'click') AND EXISTS (SELECT 1 FROM automations a WHERE a.account_id = e.account_id)));
  RETURN NULL;
END
$$;
CREATE TRIGGER events_enqueue_for_automations
  AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION enqueue_events_for_automations();
