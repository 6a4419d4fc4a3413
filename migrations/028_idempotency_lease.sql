-- Idempotency-Key claims become leases (docs/decisions/0029-idempotency-lease.md). A request
-- in flight holds its key until locked_until and renews it while it runs; once the lease has
-- run out (its process died), another request with the same key and body takes the claim
-- over. request_ref names the request across takeovers: the accepted `to` message of a send
-- made under the key carries it in messages.idempotency_ref, written by the same statement
-- that stores the message, so a retry finds a send that committed instead of sending twice.
--
-- Safe while processes of the previous version still run: the new columns are nullable, and
-- a claim those processes write gets a one-minute lease from the default (so it is neither
-- taken over at once nor stuck for a day).
ALTER TABLE idempotency_keys
  ADD COLUMN request_ref  text,
  ADD COLUMN lease_token  text,
  ADD COLUMN locked_until timestamptz DEFAULT now() + interval '1 minute';

ALTER TABLE messages ADD COLUMN idempotency_ref text;
-- At most one send per claimed request: a takeover racing an owner that outlived its lease
-- fails on this index rather than sending twice. Partial: only keyed sends are indexed.
CREATE UNIQUE INDEX messages_idempotency_ref ON messages (account_id, idempotency_ref) WHERE idempotency_ref IS NOT NULL;
