-- Messages each warming source sent to each provider per UTC day (docs/sending-identity.md#warm-up).
-- A worker reserves a send before it connects, under the row's lock, so the day's cap holds
-- for every worker together. Only sources with a warm-up plan get rows.
CREATE TABLE warmup_counts (
  source   text NOT NULL,
  provider text NOT NULL,
  day      date NOT NULL,
  sent     integer NOT NULL CHECK (sent >= 0),
  PRIMARY KEY (source, provider, day)
);
