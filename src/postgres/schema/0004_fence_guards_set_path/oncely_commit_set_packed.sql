-- Migration 0004: as in 0002_outbox_slices, and a commit whose checkpoints are all guards (a slice's
-- fence: `expected` = `version`, not 0) stays on the set path while its guards hold (step 1b).
-- Before, every commit of a worker owning slices carried its fence and went one at a time.
--
-- oncely_commit_set_packed(commits jsonb[], later integer[]) -> (results, notify, seqs): the set path
-- of group commit, called by oncely_commit_packed (never by the client). It applies the common commits
-- with ONE statement per table for the whole batch instead of a subtransaction and eight statements per
-- commit (measured: about 0.5 ms per commit inside oncely_commit, which bounded throughput).
--
-- It takes a commit when it has a stream and touches only events, its snapshot, the inbox and outbox
-- rows (insert, done), guards that hold (step 1b), and a dispatcher's lease-held outbox update, and is
-- not named in `later`. The others (checkpoints that move or a guard that fails, parked, dead letters,
-- documents, later writes sharing a key) are left
-- unanswered (null), for oncely_commit to run afterwards in batch order. Commits that share no key
-- commute, and those that share one keep their batch order: the outcome is that of applying the batch
-- one commit at a time.
--
-- Each commit keeps its own fate without a subtransaction: the guards are evaluated set-wise BEFORE
-- anything is written, and a failing commit is answered and left out of every insert:
--  - expected version: the stream's current version is read per stream and compared;
--  - duplicate message id: the inbox rows are inserted first, ON CONFLICT DO NOTHING, and a commit
--    whose row was not inserted is a duplicate (nothing else of it is written). A final outcome naming
--    its row (InboxEntry.outcomeOf) writes no inbox row and reads nothing first: the set path assumes
--    its consumer holds the row and the row is not done (by far the common case), and the done update
--    checks it; a row found done, absent (pruned) or not held raises, and the batch takes the fallback.
-- An effect key held with another request (a reuse, an error and rare) is not probed for before the
-- writes (that probe cost a twelfth of the server's CPU per batch): its row's insert does nothing,
-- the check after the outbox insert finds the held row differs, and the batch takes the fallback,
-- where that commit fails alone. What the guards cannot see either is another transaction racing on
-- the same keys (an append to the same stream, an event id already used): the insert raises, the
-- caller's subtransaction rolls the whole set path back, and oncely_commit applies the batch one
-- commit at a time, where each such race is answered per commit. Any other error (a value the server
-- refuses) takes the same fallback, so the set path never decides a commit's fate differently from
-- the per-commit path.
--
-- Rows are read by position (the packed format, see oncely_unpack): an event is [event_id, type, data,
-- causation_id, correlation_id, schema_version], an outbox row [id, category, kind, stream, payload,
-- not_before, lease_owner, lease_until, attempts, result, slice], a done row [id, outcome, result]; park,
-- unpark, dead and docs may be absent (coalesce(..., 0)).
--
-- The SET clause plans every key lookup as an index probe, for any batch size: the planner cannot see
-- how many rows an unnest or jsonb_array_elements yields (it guesses 100), and a plan cached while the
-- outbox was small became a hash join over a sequential scan of the whole outbox (measured: 15 million
-- rows read for 6,000 orders, a third of the server's CPU). force_generic_plan: that one plan is right
-- for any batch, so planning it again every call is wasted. The settings hold only while the function
-- runs. bench/commit-steps.ts cuts this function at its numbered step comments: keep them.
CREATE OR REPLACE FUNCTION ${schema}.oncely_commit_set_packed(
  p_commits jsonb[], p_later integer[], OUT results text[], OUT notify boolean, OUT seqs jsonb
)
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_c jsonb[];
  v_n integer := coalesce(cardinality(p_commits), 0);
  v_later integer[];
  v_base integer[];
  v_go integer[];
  v_dup integer[];
  v_upd integer[];
  v_byrow boolean[];
  v_byrows integer;
  v_inboxes integer;
  v_outboxes integer;
  v_dones integer;
  v_snapshots integer;
  v_rows integer;
  v_keys_c text[];
  v_keys_m text[];
  v_seqs jsonb := '{}';
  v_upd_results text[];
  v_upd_notify boolean;
  v_unleased boolean;
BEGIN
  results := array_fill(NULL::text, ARRAY[v_n]);
  notify := false;
  seqs := '{}';
  IF v_n = 0 THEN RETURN; END IF;
  -- Parsed once for every statement below; a commit the server cannot parse raises (fallback).
  v_c := p_commits;

  -- 1. Commits sharing a key (stream, inbox key, outbox id) with an EARLIER commit of the batch:
  --    left to the per-commit path, which runs them after the set path, in batch order.
  --    Named by the client (commit-batch.ts, sharingKeys).
  v_later := coalesce(p_later, '{}');

  -- 1b. The guards of the batch (checkpoints with `expected` = `version`, not 0: a slice's fence) write
  --     nothing, so a commit carrying only guards stays on the set path when every guard holds. Their
  --     rows are locked FOR SHARE first, in one order, and only then read: a worker taking a slice over
  --     (an UPDATE of its fence) waits for this batch to end and this batch for it, as the per-commit
  --     path's UPDATE of the same row makes them. A guard that does not hold leaves its commit to the
  --     per-commit path, which refuses it as before ({"checkpoint": actual, "at": index}).
  PERFORM 1 FROM ${schema}.checkpoints k
  WHERE (k.consumer, k.source) IN (
    SELECT g->>'consumer', g->>'source' FROM unnest(v_c) AS u(j), jsonb_array_elements(u.j->'checkpoints') AS g
    WHERE u.j ? 'checkpoints')
  ORDER BY k.consumer, k.source
  FOR SHARE;

  -- 2. In ONE pass over the batch: which commits the set path takes, their stream's current
  --    version, and the guard that needs no write (a version conflict answers the commit here).
  --    Every aggregate is in batch order, one element per commit.
  SELECT array_agg(CASE WHEN x.refused IS NULL THEN x.cur END ORDER BY x.ord),
    coalesce(array_agg(x.ord ORDER BY x.ord) FILTER (WHERE x.taken AND x.refused IS NULL), '{}'),
    array_agg(x.refused ORDER BY x.ord),
    coalesce(array_agg(x.ord ORDER BY x.ord) FILTER (WHERE x.is_update AND NOT x.is_later), '{}'),
    array_agg(x.by_row ORDER BY x.ord),
    count(*) FILTER (WHERE x.taken AND x.refused IS NULL AND x.by_row),
    count(*) FILTER (WHERE x.taken AND x.refused IS NULL AND x.j->'inbox' IS NOT NULL AND NOT x.by_row),
    coalesce(sum(jsonb_array_length(x.j->'outbox')) FILTER (WHERE x.taken AND x.refused IS NULL), 0),
    coalesce(sum(jsonb_array_length(x.j->'done')) FILTER (WHERE x.taken AND x.refused IS NULL), 0),
    count(*) FILTER (WHERE x.taken AND x.refused IS NULL AND x.j->'snapshot' IS NOT NULL)
  INTO v_base, v_go, results, v_upd, v_byrow, v_byrows, v_inboxes, v_outboxes, v_dones, v_snapshots
  FROM (
    SELECT tk.ord, tk.j, tk.taken, tk.is_update, tk.is_later, tk.cur, coalesce(tk.taken AND tk.j->'inbox' ? 'outcome_of', false) AS by_row,
      CASE WHEN NOT tk.taken THEN NULL
      WHEN tk.j->>'expected' IS NOT NULL AND (tk.j->>'expected')::integer <> tk.cur
        THEN jsonb_build_object('conflict', tk.cur)::text
      END AS refused
    FROM (
      SELECT c.ord, c.j, c.taken, c.is_update, c.is_later,
        CASE WHEN c.taken THEN (SELECT coalesce(max(e.version), 0) FROM ${schema}.events e WHERE e.stream = c.j->>'stream') END AS cur
      FROM (
        SELECT u.ord::integer AS ord, u.j, u.j ? 'update' AS is_update, u.ord = ANY (v_later) AS is_later,
          coalesce(NOT u.j ? 'update' AND u.j->>'stream' IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(u.j->'checkpoints', '[]')) AS g
              WHERE g->>'expected' IS NULL OR (g->>'expected')::integer = 0
                OR (g->>'expected')::integer <> (g->>'version')::integer
                OR NOT EXISTS (SELECT 1 FROM ${schema}.checkpoints k WHERE k.consumer = g->>'consumer'
                  AND k.source = g->>'source' AND k.version = (g->>'expected')::integer))
            AND coalesce(jsonb_array_length(u.j->'park'), 0) = 0 AND coalesce(jsonb_array_length(u.j->'unpark'), 0) = 0
            AND coalesce(jsonb_array_length(u.j->'dead'), 0) = 0 AND coalesce(jsonb_array_length(u.j->'docs'), 0) = 0
            AND NOT u.ord = ANY (v_later), false) AS taken
        FROM unnest(v_c) WITH ORDINALITY AS u(j, ord)
      ) c
      OFFSET 0
    ) tk
    OFFSET 0
  ) x;

  -- Lease-held outbox updates (a dispatcher recording an attempt), one statement for all; each
  -- answers the row's new status, or null when the lease was not held (or the row is done).
  IF cardinality(v_upd) > 0 THEN
    WITH u AS (
      SELECT g, v_c[g]->'update' AS v FROM unnest(v_upd) AS g
    ), upd AS (
      UPDATE ${schema}.outbox o SET
        status = coalesce(u.v->>'status', o.status),
        attempts = coalesce((u.v->>'attempts')::integer, o.attempts),
        not_before = coalesce((u.v->>'not_before')::bigint, o.not_before),
        last_error = CASE WHEN u.v ? 'last_error' THEN u.v->>'last_error' ELSE o.last_error END,
        outcome = CASE WHEN u.v ? 'outcome' THEN u.v->>'outcome' ELSE o.outcome END,
        result = CASE WHEN u.v ? 'result' THEN u.v->'result' ELSE o.result END,
        lease_owner = CASE WHEN (u.v->>'release')::boolean THEN NULL ELSE o.lease_owner END,
        lease_until = CASE WHEN (u.v->>'release')::boolean THEN NULL ELSE o.lease_until END,
        updated_at = (u.v->>'now')::bigint
      FROM u
      WHERE o.id = u.v->>'id' AND (u.v->>'owner' IS NULL OR o.lease_owner = u.v->>'owner') AND o.status <> 'done'
      RETURNING u.g, o.status, (u.v->>'force')::boolean AS force)
    SELECT array_agg(jsonb_build_object('status', upd.status)::text ORDER BY x.g),
      coalesce(bool_or(upd.status IN ('pending', 'resolving') OR (upd.status IS NOT NULL AND upd.force)), false)
    INTO v_upd_results, v_upd_notify
    FROM unnest(v_upd) AS x(g) LEFT JOIN upd ON upd.g = x.g;
    FOR i IN 1..cardinality(v_upd) LOOP
      results[v_upd[i]] := v_upd_results[i];
    END LOOP;
    notify := v_upd_notify;
  END IF;
  IF cardinality(v_go) = 0 THEN RETURN; END IF;

  -- 3. The inbox rows first: a commit whose row is already there is a duplicate, and nothing else
  --    of it is written. (A concurrent inserter of the key is waited for, then seen as present.)
  --    Which rows were not inserted is looked for only when fewer were inserted than asked.
  IF v_inboxes > 0 THEN
    WITH ins AS (
      INSERT INTO ${schema}.inbox (consumer, message_id, reply, recorded_at)
      SELECT v_c[g]#>>'{inbox,consumer}', v_c[g]#>>'{inbox,message_id}', v_c[g]#>'{inbox,reply}',
        (v_c[g]->>'now')::bigint
      FROM unnest(v_go) AS g WHERE v_c[g]->'inbox' IS NOT NULL AND NOT v_byrow[g]
      ORDER BY g
      ON CONFLICT DO NOTHING
      RETURNING consumer, message_id)
    SELECT count(*), array_agg(ins.consumer), array_agg(ins.message_id) INTO v_rows, v_keys_c, v_keys_m FROM ins;
    IF v_rows < v_inboxes THEN
      v_dup := ARRAY(SELECT g FROM unnest(v_go) AS g WHERE v_c[g]->'inbox' IS NOT NULL AND NOT v_byrow[g] AND NOT EXISTS (
        SELECT 1 FROM unnest(v_keys_c, v_keys_m) AS k(consumer, message_id)
        WHERE k.consumer = v_c[g]#>>'{inbox,consumer}' AND k.message_id = v_c[g]#>>'{inbox,message_id}') ORDER BY g);
      FOR i IN 1..cardinality(v_dup) LOOP
        results[v_dup[i]] := '{"duplicate": true}';
      END LOOP;
      v_go := ARRAY(SELECT g FROM unnest(v_go) AS g WHERE g <> ALL (v_dup) ORDER BY g);
      IF cardinality(v_go) = 0 THEN RETURN; END IF;
      SELECT coalesce(sum(jsonb_array_length(v_c[g]->'outbox')), 0), coalesce(sum(jsonb_array_length(v_c[g]->'done')), 0)
      INTO v_outboxes, v_dones FROM unnest(v_go) AS g;
    END IF;
  END IF;

  -- 4. Events, at the versions read in 2. A writer that appended since raises a unique violation
  --    (as does an event id already used): the fallback answers it per commit.
  INSERT INTO ${schema}.events
    (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
  SELECT v_c[g]->>'stream', v_base[g] + x.ord, x.v->>0, x.v->>1,
    x.v->2, x.v->>3, x.v->>4,
    (v_c[g]->>'now')::bigint, (x.v->>5)::integer
  FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'events') WITH ORDINALITY AS x(v, ord)
  ORDER BY g, x.ord;

  -- Only when some commit has one (counted in 2; duplicates removed in 3 can only make it fewer):
  -- a statement costs its executor start even when it selects nothing.
  IF v_snapshots > 0 THEN
    INSERT INTO ${schema}.snapshots AS s (stream, version, schema_version, state, taken_at)
    SELECT v_c[g]->>'stream', (v_c[g]#>>'{snapshot,version}')::integer, (v_c[g]#>>'{snapshot,schema_version}')::integer,
      v_c[g]#>'{snapshot,state}', (v_c[g]->>'now')::bigint
    FROM unnest(v_go) AS g WHERE v_c[g]->'snapshot' IS NOT NULL
    ON CONFLICT (stream) DO UPDATE SET version = excluded.version, schema_version = excluded.schema_version,
      state = excluded.state, taken_at = excluded.taken_at;
  END IF;

  -- 5. Outbox rows, seq drawn in batch order then row order; an id already held is not inserted.
  --    Each inserted id's seq, as one jsonb object: outbox ids are distinct across the set path,
  --    so an inserted id belongs to the one commit that lists it.
  IF v_outboxes > 0 THEN
    WITH ins AS (
      INSERT INTO ${schema}.outbox AS ob (id, category, kind, stream, payload, status, attempts, not_before, lease_owner,
        lease_until, result, created_at, updated_at, slice)
      SELECT x.v->>0, x.v->>1, x.v->>2,
        x.v->>3, x.v->4, 'pending', (x.v->>8)::integer,
        (x.v->>5)::bigint, x.v->>6,
        (x.v->>7)::bigint, x.v->9, (v_c[g]->>'now')::bigint,
        (v_c[g]->>'now')::bigint, (x.v->>10)::integer
      FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'outbox') WITH ORDINALITY AS x(v, ord)
      ORDER BY g, x.ord
      ON CONFLICT (id) DO NOTHING
      RETURNING ob.id, ob.seq, ob.lease_owner)
    SELECT count(*), coalesce(jsonb_object_agg(ins.id, ins.seq), '{}'), coalesce(bool_or(ins.lease_owner IS NULL), false)
    INTO v_rows, v_seqs, v_unleased FROM ins;
    notify := notify OR v_unleased;
    IF v_rows < v_outboxes THEN
      -- Some ids were held already: by the same request (a key asked for again, no error), or by
      -- another one (a reuse, held before the batch or inserted concurrently), which the fallback
      -- answers per commit.
      IF EXISTS (
        SELECT 1 FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'outbox') AS x(v)
        JOIN ${schema}.outbox o ON o.id = x.v->>0
        WHERE x.v->>1 = 'effect'
          AND (o.stream <> x.v->>3 OR o.kind <> x.v->>2
            -- A payload's identity leaves out its trace (the requesting command's trace context).
            OR (CASE WHEN jsonb_typeof(o.payload) = 'object' THEN o.payload - 'trace' ELSE o.payload END)
              IS DISTINCT FROM (CASE WHEN jsonb_typeof((x.v->4)) = 'object' THEN (x.v->4) - 'trace' ELSE (x.v->4) END))
      ) THEN
        RAISE EXCEPTION USING ERRCODE = 'OC002', MESSAGE = 'an effect key is held with another request';
      END IF;
    END IF;
  END IF;

  -- 6. Rows done. Keys are distinct across the set path; within one commit the first entry wins.
  --    A final outcome recorded by its row (v_byrow) must find the row held by its consumer and
  --    still not done: a duplicate (the row done, maybe by a transaction racing this one), a row
  --    pruned or another's leaves the whole batch to the fallback, which answers each exactly.
  IF v_dones > 0 THEN
    WITH upd AS (
      UPDATE ${schema}.outbox o SET status = 'done', outcome = d.v->>1, result = d.v->2,
        lease_owner = NULL, lease_until = NULL, updated_at = d.now
      FROM (
        SELECT DISTINCT ON (x.v->>0) x.v, (v_c[g]->>'now')::bigint AS now,
          v_byrow[g] AND x.v->>0 = v_c[g]#>>'{inbox,outcome_of}' AS by_row,
          v_c[g]#>>'{inbox,consumer}' AS consumer
        FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'done') WITH ORDINALITY AS x(v, ord)
        ORDER BY x.v->>0, x.ord
      ) d
      WHERE o.id = d.v->>0 AND o.status <> 'done'
        AND (NOT d.by_row OR (o.stream = d.consumer AND o.category <> 'event'))
      RETURNING d.by_row)
    SELECT count(*) FILTER (WHERE upd.by_row) INTO v_rows FROM upd;
    IF v_rows < v_byrows THEN
      RAISE EXCEPTION USING ERRCODE = 'OC002', MESSAGE = 'an outcome''s row was not open and held by its consumer';
    END IF;
  END IF;

  -- 7. Every applied commit's answer, in one statement: the commits of v_go are those with a base
  --    version and no answer yet (a refused or duplicate commit has its answer; one left to the
  --    fallback has no base).
    results := ARRAY(
    SELECT CASE WHEN results[i] IS NULL AND v_base[i] IS NOT NULL THEN '{"base": ' || v_base[i] || '}' ELSE results[i] END
    FROM generate_series(1, v_n) AS i ORDER BY i);
  seqs := v_seqs;

END
$oncely$;
