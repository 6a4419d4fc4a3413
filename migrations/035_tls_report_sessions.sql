-- TLS outcomes of our SMTP sessions per recipient domain and UTC day, the counts a TLS report
-- (RFC 8460) is made of (docs/sending-identity.md#tls-reports). Deployment-wide: the report
-- is ours as a sending organisation, not a tenant's. One row per distinct
-- (policy, result, receiving host, addresses); successes are counted without the hosts, so a
-- busy domain is a handful of rows a day, each incremented in place.
CREATE TABLE tls_report_sessions (
  domain        text NOT NULL,
  day           date NOT NULL,
  policy_type   text NOT NULL CHECK (policy_type IN ('sts', 'no-policy-found')),
  policy_hash   text NOT NULL,              -- sha256 hex of policy_text: keys the policy without indexing its text
  policy_text   text NOT NULL,              -- the policy as fetched; '' when none could be had
  result_type   text NOT NULL,              -- 'success' or an RFC 8460 §4.3 result type
  receiving_mx  text NOT NULL DEFAULT '',   -- '' for successes
  receiving_ip  text NOT NULL DEFAULT '',
  sending_ip    text NOT NULL DEFAULT '',
  sessions      bigint NOT NULL CHECK (sessions > 0),
  PRIMARY KEY (domain, day, policy_type, policy_hash, result_type, receiving_mx, receiving_ip, sending_ip)
);

-- Old days are deleted by age (maintenance): the index serves that sweep.
CREATE INDEX tls_report_sessions_day ON tls_report_sessions (day);
