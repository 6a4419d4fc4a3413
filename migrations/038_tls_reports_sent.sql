-- TLS reports sent to recipient domains (POSTLINE_TLSRPT_SEND; docs/sending-identity.md#tls-reports-rfc-8460).
-- The row is the claim: the first worker to insert (domain, day) sends that report, no other.
CREATE TABLE tls_reports_sent (
  domain     text NOT NULL,
  day        date NOT NULL,
  claimed_at timestamptz NOT NULL,
  outcome    jsonb,            -- per rua address: delivered or why not
  PRIMARY KEY (domain, day)
);
