-- Migration 0009: as in 0008_published_at_commit, its parts in functions of their own so that no
-- function is over ~200 lines (0009_commit_parts): oncely_commit_update, _checkpoints, _outbox, _parked,
-- _docs and _published, each called where its statements stood, once for a commit that has that part.
-- None opens a subtransaction: what a part writes and locks belongs to the commit's block below, and
-- what it raises is caught there as if raised here. Statements, locks and their order, results and
-- NOTIFYs are unchanged; so are the errors of a malformed commit (a guard below that reads `<> '[]'`
-- raises nothing itself and lets the part raise what the statement raised before).
--
-- 0008_published_at_commit: a commit's `published` entries are appended to the published log in the
-- commit's own subtransaction (docs/design/event-hand-over.md). The client sends every commit that has
-- such entries to this per-commit path (commit-batch.ts names it in `later`), so the set path
-- (oncely_commit_set_packed) never meets one. One NOTIFY on the published channel for the call, when
-- some commit appended an entry.
--
-- oncely_commit(commits text[], channel text) -> text[]: the per-commit path of group commit. The
-- client calls it for a lone commit (commit-batch.ts); oncely_commit_packed calls it for the commits its
-- set path leaves unanswered, or for the whole batch when the set path fails.
--
-- Each commit (one JSON text in the object format, see commit-batch.ts) runs in its own BEGIN ...
-- EXCEPTION block, a subtransaction: a version conflict, a duplicate inbox message id, a checkpoint
-- conflict, a value the server refuses (a NUL byte in JSON text) or any other error rolls back THAT
-- commit only and becomes its result; the others land. Every commit is even parsed inside its block,
-- so one unparsable commit fails alone. Called outside an explicit transaction, the call and its
-- COMMIT are one round trip and one WAL flush.
--
-- Appends are guarded twice: the stream's current version is read and compared with the expected one,
-- and a writer committing concurrently is caught by the primary key on (stream, version) (we wait for
-- it, then fail). Without an expected version that race is answered `retry`, and the commit goes again
-- in the next batch. A commit with an expected version and no events is checked against the version
-- its statement reads: a writer appending concurrently is ordered after it, which is serializable
-- because such a commit writes nothing the appender's decision read.
--
-- An item {"update": ...} is instead one lease-held outbox update (see outbox.ts), answered
-- {"status": new status, or null when the lease was not held}, so a dispatcher's writes join the
-- same batches as the commits.
--
-- Results, one JSON text per commit: {"version", "inserted": [[id, seq]...]} or {"conflict": actual}
-- or {"checkpoint": actual, "at": index} or {"duplicate": true} or {"reused": id, "held": {...}} or {"invalid":
-- message} or {"retry": message} or {"error": message, "code": sqlstate}. OC001 is this function's
-- own SQLSTATE: its message is the commit's answer. A NOTIFY on `channel` is sent (delivered at
-- COMMIT) only when some commit inserted a row that was not handed over (not inserted leased).
-- The SET clause: see oncely_commit_set_packed.sql.
CREATE OR REPLACE FUNCTION ${schema}.oncely_commit(p_commits text[], p_channel text) RETURNS text[]
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_results text[] := ARRAY[]::text[];
  v_raw text;
  c jsonb;
  v_stream text;
  v_expected integer;
  v_current integer;
  v_events integer;
  v_now bigint;
  v_inserted jsonb;
  v_unleased bigint;
  v_notify boolean := false;
  v_actual integer;
  v_constraint text;
  v_message text;
  v_u jsonb;
  v_status text;
  v_held text;
  v_published boolean := false;
BEGIN
  FOREACH v_raw IN ARRAY p_commits LOOP
    v_stream := NULL;
    v_expected := NULL;
    BEGIN
      c := v_raw::jsonb;
      IF c ? 'update' THEN
        -- A lease-held outbox update (a dispatcher recording an attempt), batched like a commit.
        v_u := c->'update';
        v_status := ${schema}.oncely_commit_update(v_u);
        v_notify := v_notify OR coalesce(v_status IN ('pending', 'resolving'), false)
          OR (v_status IS NOT NULL AND (v_u->>'force')::boolean);
        v_results := v_results || jsonb_build_object('status', v_status)::text;
      ELSE
        v_stream := c->>'stream';
        v_expected := (c->>'expected')::integer;
        v_now := (c->>'now')::bigint;
        v_events := jsonb_array_length(c->'events');
        v_current := 0;
        IF v_stream IS NOT NULL THEN
          SELECT coalesce(max(e.version), 0) INTO v_current FROM ${schema}.events e WHERE e.stream = v_stream;
          IF v_expected IS NOT NULL AND v_expected <> v_current THEN
            RAISE EXCEPTION USING ERRCODE = 'OC001', MESSAGE = jsonb_build_object('conflict', v_current)::text;
          END IF;
          IF v_events > 0 THEN
            INSERT INTO ${schema}.events
              (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
            SELECT v_stream, v_current + x.ord, x.v->>'event_id', x.v->>'type', x.v->'data', x.v->>'causation_id',
              x.v->>'correlation_id', v_now, (x.v->>'schema_version')::integer
            FROM jsonb_array_elements(c->'events') WITH ORDINALITY AS x(v, ord)
            ORDER BY x.ord;
          END IF;
          IF c->'snapshot' IS NOT NULL THEN
            INSERT INTO ${schema}.snapshots (stream, version, schema_version, state, taken_at)
            VALUES (v_stream, (c#>>'{snapshot,version}')::integer, (c#>>'{snapshot,schema_version}')::integer,
              c#>'{snapshot,state}', v_now)
            ON CONFLICT (stream) DO UPDATE SET version = excluded.version, schema_version = excluded.schema_version,
              state = excluded.state, taken_at = excluded.taken_at;
          END IF;
        END IF;
        IF c->'inbox' IS NOT NULL THEN
          -- A final outcome whose row the consumer holds is recorded by the row's done
          -- transition (see InboxEntry.outcomeOf). FOR UPDATE waits for a concurrent writer of the
          -- row and reads its new status, so two outcomes of one row cannot both find it not done.
          v_held := NULL;
          IF c#>>'{inbox,outcome_of}' IS NOT NULL THEN
            SELECT o.status INTO v_held FROM ${schema}.outbox o
            WHERE o.id = c#>>'{inbox,outcome_of}' AND o.stream = c#>>'{inbox,consumer}' AND o.category <> 'event'
            FOR UPDATE;
            IF v_held = 'done' THEN
              RAISE EXCEPTION USING ERRCODE = 'OC001', MESSAGE = '{"duplicate": true}';
            END IF;
          END IF;
          IF v_held IS NULL THEN
            INSERT INTO ${schema}.inbox (consumer, message_id, reply, recorded_at)
            VALUES (c#>>'{inbox,consumer}', c#>>'{inbox,message_id}', c#>'{inbox,reply}', v_now);
          END IF;
        END IF;
        -- The checkpoint guards (oncely_commit_checkpoints): one not moved raises OC001
        -- {"checkpoint": actual, "at": its index}, and this commit's subtransaction undoes the others.
        IF jsonb_array_length(c->'checkpoints') > 0 THEN
          PERFORM ${schema}.oncely_commit_checkpoints(c, v_now);
        END IF;
        -- Each part only when the commit has it: an empty statement still costs its execution.
        v_inserted := '[]'::jsonb;
        v_unleased := 0;
        IF jsonb_array_length(c->'outbox') > 0 THEN
          -- The rows, then the effect-key reuse check, which raises OC001 {"reused": id, "held": {...}}.
          SELECT o.inserted, o.unleased INTO v_inserted, v_unleased FROM ${schema}.oncely_commit_outbox(c, v_now) o;
        END IF;
        IF jsonb_array_length(c->'done') > 0 THEN
          UPDATE ${schema}.outbox o SET status = 'done', outcome = x.v->>'outcome', result = x.v->'result',
            lease_owner = NULL, lease_until = NULL, updated_at = v_now
          FROM jsonb_array_elements(c->'done') AS x(v)
          WHERE o.id = x.v->>'id' AND o.status <> 'done';
        END IF;
        IF c->'park' <> '[]' OR c->'unpark' <> '[]' OR c->'dead' <> '[]' THEN
          PERFORM ${schema}.oncely_commit_parked(c, v_now);
        END IF;
        -- In order (oncely_commit_docs): a commit may upsert and then delete the same document.
        IF c->'docs' <> '[]' THEN
          PERFORM ${schema}.oncely_commit_docs(c, v_now);
        END IF;
        -- Last, so the advisory lock is taken after every check that may refuse the commit; held to the
        -- call's COMMIT (taken in a subtransaction that is rolled back, it goes with it).
        IF coalesce(jsonb_array_length(c->'published'), 0) > 0 THEN
          IF ${schema}.oncely_commit_published(c, v_now) THEN
            v_published := true;
          END IF;
        END IF;
        v_notify := v_notify OR v_unleased > 0;
        v_results := v_results || jsonb_build_object('version', v_current + v_events, 'inserted', v_inserted)::text;
      END IF;
    EXCEPTION
      WHEN SQLSTATE 'OC001' THEN
        v_results := v_results || SQLERRM;
      WHEN unique_violation THEN
        GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME, v_message = MESSAGE_TEXT;
        IF v_constraint = 'events_pkey' AND v_expected IS NULL THEN
          v_results := v_results || jsonb_build_object('retry', v_message)::text;
        ELSIF v_constraint = 'events_pkey' THEN
          -- Another writer appended concurrently; we waited for it, so its version is visible now.
          SELECT coalesce(max(e.version), 0) INTO v_actual FROM ${schema}.events e WHERE e.stream = v_stream;
          v_results := v_results || jsonb_build_object('conflict', v_actual)::text;
        ELSIF v_constraint = 'events_event_id_key' THEN
          v_results := v_results || jsonb_build_object('invalid', v_message)::text;
        ELSIF v_constraint = 'inbox_pkey' THEN
          v_results := v_results || jsonb_build_object('duplicate', true)::text;
        ELSE
          v_results := v_results || jsonb_build_object('error', v_message, 'code', SQLSTATE,
            'constraint', v_constraint)::text;
        END IF;
      WHEN deadlock_detected OR serialization_failure THEN
        v_results := v_results || jsonb_build_object('retry', SQLERRM, 'code', SQLSTATE)::text;
      WHEN OTHERS THEN
        v_results := v_results || jsonb_build_object('error', SQLERRM, 'code', SQLSTATE)::text;
    END;
  END LOOP;
  IF v_notify THEN
    PERFORM pg_notify(p_channel, '');
  END IF;
  IF v_published THEN
    PERFORM pg_notify(${published_channel}, '');
  END IF;
  RETURN v_results;
END
$oncely$;
