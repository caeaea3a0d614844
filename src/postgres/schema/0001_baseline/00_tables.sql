-- The tables. Text columns that are sorted or compared by prefix use the "C" collation, so their
-- order is by code point, as in the other back ends.

CREATE TABLE ${schema}.events (
  global_position bigint GENERATED ALWAYS AS IDENTITY,
  stream text COLLATE "C" NOT NULL,
  version integer NOT NULL,
  event_id text NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  causation_id text,
  correlation_id text,
  recorded_at bigint NOT NULL,
  schema_version integer NOT NULL,
  CONSTRAINT events_pkey PRIMARY KEY (stream, version),
  CONSTRAINT events_event_id_key UNIQUE (event_id),
  CONSTRAINT events_global_position_key UNIQUE (global_position)
);
CREATE TABLE ${schema}.snapshots (
  stream text COLLATE "C" PRIMARY KEY,
  version integer NOT NULL,
  schema_version integer NOT NULL,
  state jsonb NOT NULL,
  taken_at bigint NOT NULL
);
CREATE TABLE ${schema}.outbox (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  category text NOT NULL,
  kind text NOT NULL,
  stream text COLLATE "C" NOT NULL,
  payload jsonb NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL,
  not_before bigint NOT NULL,
  lease_owner text,
  lease_until bigint,
  last_error text,
  outcome text,
  result jsonb NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
-- The claim and stream-order indexes hold only the rows still to run: a row marked done (or dead)
-- leaves them, so the UPDATE that finishes an effect writes two index entries instead of four, and a
-- claim never walks past finished rows however many the outbox keeps. The stream-order index holds no
-- effect rows either: only claims in stream order read it (the event relay's, for events), and every
-- effect row paid an entry in it that nothing looked up. The claims that use these indexes say
-- `status NOT IN ('done', 'dead')` (and `category <> 'effect'`) literally, so the planner can prove
-- the partial index applies (see outbox.ts).
CREATE INDEX outbox_claim ON ${schema}.outbox (status, not_before) WHERE status NOT IN ('done', 'dead');
CREATE INDEX outbox_stream_order ON ${schema}.outbox (stream, category, seq)
  WHERE status NOT IN ('done', 'dead') AND category <> 'effect';
CREATE TABLE ${schema}.inbox (
  consumer text NOT NULL,
  message_id text NOT NULL,
  reply jsonb NOT NULL,
  recorded_at bigint NOT NULL,
  CONSTRAINT inbox_pkey PRIMARY KEY (consumer, message_id)
);
CREATE INDEX inbox_recorded_at ON ${schema}.inbox (recorded_at);
CREATE TABLE ${schema}.checkpoints (
  consumer text NOT NULL,
  source text NOT NULL,
  version integer NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (consumer, source)
);
CREATE TABLE ${schema}.parked (
  consumer text NOT NULL,
  source text COLLATE "C" NOT NULL,
  version integer NOT NULL,
  message jsonb NOT NULL,
  parked_at bigint NOT NULL,
  PRIMARY KEY (consumer, source, version)
);
CREATE TABLE ${schema}.dead_letters (
  id text COLLATE "C" PRIMARY KEY,
  consumer text NOT NULL,
  message_id text,
  payload jsonb NOT NULL,
  error text NOT NULL,
  stack text,
  attempts integer NOT NULL,
  first_failed_at bigint NOT NULL,
  last_failed_at bigint NOT NULL,
  status text NOT NULL,
  resolved_at bigint
);
CREATE INDEX dead_letters_list ON ${schema}.dead_letters (consumer, status, first_failed_at);
CREATE TABLE ${schema}.documents (
  collection text NOT NULL,
  id text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (collection, id)
);

-- The journal transport's published log (appended by oncely_publish and oncely_publish_batch).
CREATE TABLE ${schema}.published (
  position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  message_id text COLLATE "C" NOT NULL UNIQUE,
  subject text NOT NULL,
  body text NOT NULL,
  published_at bigint NOT NULL
);
