-- A TLS report that could not be delivered for a temporary reason (an MX deferring, a DNS
-- timeout, an https rua answering 5xx) is tried again (docs/sending-identity.md#tls-reports-rfc-8460):
-- retry_at is when, attempts how many tries so far. The row stays the claim: a worker takes a
-- due retry by clearing retry_at under the row's lock, so no two workers send it twice.
ALTER TABLE tls_reports_sent
  ADD COLUMN attempts integer NOT NULL DEFAULT 1,
  ADD COLUMN retry_at timestamptz;

CREATE INDEX tls_reports_sent_retry ON tls_reports_sent (retry_at) WHERE retry_at IS NOT NULL;
