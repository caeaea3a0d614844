-- Migration 0009: as in 0004_fence_guards_set_path, its parts in functions of their own so that no
-- function is over ~200 lines (0009_commit_parts): oncely_commit_set_updates, _set_inbox (step 3),
-- _set_events (4), _set_outbox (5) and _set_done (6), each called where its statements stood, once per
-- batch that has that part. None opens a subtransaction: what a part writes and locks belongs to the
-- caller's, and what it raises rolls the set path back as before. Statements, locks and their order,
-- results and NOTIFYs are unchanged.
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
  v_seqs jsonb := '{}';
  v_upd_results text[];
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
  -- (oncely_commit_set_updates; `notify` is still false here).
  IF cardinality(v_upd) > 0 THEN
    SELECT u.results, u.notify INTO v_upd_results, notify FROM ${schema}.oncely_commit_set_updates(v_c, v_upd) u;
    FOR i IN 1..cardinality(v_upd) LOOP
      results[v_upd[i]] := v_upd_results[i];
    END LOOP;
  END IF;
  IF cardinality(v_go) = 0 THEN RETURN; END IF;

  -- 3. The inbox rows first: a commit whose row is already there is a duplicate, and nothing else
  --    of it is written. (A concurrent inserter of the key is waited for, then seen as present.)
  --    Which rows were not inserted is looked for only when fewer were inserted than asked.
  IF v_inboxes > 0 THEN
    v_dup := ${schema}.oncely_commit_set_inbox(v_c, v_go, v_byrow, v_inboxes);
    IF v_dup IS NOT NULL THEN
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
  --    (oncely_commit_set_events, with the snapshots.)
  PERFORM ${schema}.oncely_commit_set_events(v_c, v_go, v_base, v_snapshots);

  -- 5. Outbox rows, seq drawn in batch order then row order; an id already held is not inserted.
  --    Each inserted id's seq, as one jsonb object: outbox ids are distinct across the set path,
  --    so an inserted id belongs to the one commit that lists it.
  --    The rows not inserted are then checked (oncely_commit_set_outbox): an effect key held with
  --    another request raises, and the batch takes the fallback.
  IF v_outboxes > 0 THEN
    SELECT o.seqs, o.unleased INTO v_seqs, v_unleased FROM ${schema}.oncely_commit_set_outbox(v_c, v_go, v_outboxes) o;
    notify := notify OR v_unleased;
  END IF;

  -- 6. Rows done. Keys are distinct across the set path; within one commit the first entry wins.
  --    A final outcome recorded by its row (v_byrow) must find the row held by its consumer and
  --    still not done: a duplicate (the row done, maybe by a transaction racing this one), a row
  --    pruned or another's leaves the whole batch to the fallback, which answers each exactly.
  IF v_dones > 0 THEN
    PERFORM ${schema}.oncely_commit_set_done(v_c, v_go, v_byrow, v_byrows);
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
