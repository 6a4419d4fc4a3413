-- MTA-STS policies of recipient domains (RFC 8461; docs/sending-identity.md). Deployment-wide
-- data about receivers, not about a tenant: fetched once per max_age for every worker, and
-- kept across restarts (§5.1: a cached policy stays in force until it expires).
CREATE TABLE mta_sts_policies (
  domain      text PRIMARY KEY,                     -- lower-case A-label
  policy_id   text NOT NULL,                        -- the id= of the _mta-sts TXT record it was fetched under
  mode        text NOT NULL CHECK (mode IN ('enforce', 'testing', 'none')),
  max_age     integer NOT NULL CHECK (max_age >= 0),
  mx          text[] NOT NULL,
  policy_text text NOT NULL,                        -- as fetched: TLS reports quote it
  fetched_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL
);
