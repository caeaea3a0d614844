-- Migration 0006: as in 0002_outbox_slices, and a guard (a checkpoint with `expected` = `version`, not 0:
-- a slice's fence) is checked under a FOR SHARE lock instead of being written. Before, the per-commit
-- path wrote a guard's row again with its own version, which takes the row's update lock: two batches
-- in flight, each holding some fences FOR SHARE from the set path (0004) and writing others here,
-- waited for each other until PostgreSQL's deadlock detector aborted one (a second, every time a
-- worker renewed its leases, whose commit carries every fence it holds). A guard writes nothing, so
-- it needs only what the set path takes: a share lock, which waits for a worker moving the fence (an
-- update) and is then read again, and never for another guard.
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
  v_cp jsonb;
  v_i integer;
  v_moved integer;
  v_actual integer;
  v_doc jsonb;
  v_constraint text;
  v_message text;
  v_u jsonb;
  v_status text;
  v_held text;
  v_reused jsonb;
BEGIN
  FOREACH v_raw IN ARRAY p_commits LOOP
    v_stream := NULL;
    v_expected := NULL;
    BEGIN
      c := v_raw::jsonb;
      IF c ? 'update' THEN
        -- A lease-held outbox update (a dispatcher recording an attempt), batched like a commit.
        v_u := c->'update';
        UPDATE ${schema}.outbox SET
          status = coalesce(v_u->>'status', status),
          attempts = coalesce((v_u->>'attempts')::integer, attempts),
          not_before = coalesce((v_u->>'not_before')::bigint, not_before),
          last_error = CASE WHEN v_u ? 'last_error' THEN v_u->>'last_error' ELSE last_error END,
          outcome = CASE WHEN v_u ? 'outcome' THEN v_u->>'outcome' ELSE outcome END,
          result = CASE WHEN v_u ? 'result' THEN v_u->'result' ELSE result END,
          lease_owner = CASE WHEN (v_u->>'release')::boolean THEN NULL ELSE lease_owner END,
          lease_until = CASE WHEN (v_u->>'release')::boolean THEN NULL ELSE lease_until END,
          updated_at = (v_u->>'now')::bigint
        WHERE id = v_u->>'id' AND (v_u->>'owner' IS NULL OR lease_owner = v_u->>'owner') AND status <> 'done'
        RETURNING status INTO v_status;
        v_notify := v_notify OR coalesce(v_status IN ('pending', 'resolving'), false)
          OR (v_status IS NOT NULL AND (v_u->>'force')::boolean);
        v_results := v_results || jsonb_build_object('status', v_status)::text;
      ELSE
        v_stream := c->>'stream';
        v_expected := (c->>'expected')::integer;
        v_now := (c->>'now')::bigint;
        v_events := jsonb_array_length(c->'events');
        v_current := 0;
        v_moved := 1;
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
        -- The checkpoint guards, each in turn: no `expected`, the checkpoint is set; `expected` 0, it
        -- is created (or moved from 0); otherwise it moves only from `expected`. One not moved refuses
        -- the commit (its subtransaction undoes the others): {"checkpoint": actual, "at": its index}.
        FOR v_i IN 0 .. coalesce(jsonb_array_length(c->'checkpoints'), 0) - 1 LOOP
          v_cp := c->'checkpoints'->v_i;
          v_moved := 1;
          IF v_cp->'expected' IS NULL THEN
            INSERT INTO ${schema}.checkpoints (consumer, source, version, updated_at)
            VALUES (v_cp->>'consumer', v_cp->>'source', (v_cp->>'version')::integer, v_now)
            ON CONFLICT (consumer, source) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at;
          ELSIF (v_cp->>'expected')::integer = 0 THEN
            INSERT INTO ${schema}.checkpoints AS cp (consumer, source, version, updated_at)
            VALUES (v_cp->>'consumer', v_cp->>'source', (v_cp->>'version')::integer, v_now)
            ON CONFLICT (consumer, source) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at
            WHERE cp.version = 0;
            GET DIAGNOSTICS v_moved = ROW_COUNT;
          ELSIF (v_cp->>'expected')::integer = (v_cp->>'version')::integer THEN
            -- A guard: held when the row is at `expected`. FOR SHARE waits for a worker moving it (its
            -- update) and reads the row as that worker left it; other guards share the lock.
            PERFORM 1 FROM ${schema}.checkpoints k
            WHERE k.consumer = v_cp->>'consumer' AND k.source = v_cp->>'source'
              AND k.version = (v_cp->>'expected')::integer
            FOR SHARE;
            GET DIAGNOSTICS v_moved = ROW_COUNT;
          ELSE
            UPDATE ${schema}.checkpoints SET version = (v_cp->>'version')::integer, updated_at = v_now
            WHERE consumer = v_cp->>'consumer' AND source = v_cp->>'source'
              AND version = (v_cp->>'expected')::integer;
            GET DIAGNOSTICS v_moved = ROW_COUNT;
          END IF;
          IF v_moved = 0 THEN
            -- A concurrent writer of the same checkpoint held its row lock; we waited and re-checked.
            SELECT coalesce(max(k.version), 0) INTO v_actual FROM ${schema}.checkpoints k
            WHERE k.consumer = v_cp->>'consumer' AND k.source = v_cp->>'source';
            RAISE EXCEPTION USING ERRCODE = 'OC001',
              MESSAGE = jsonb_build_object('checkpoint', v_actual, 'at', v_i)::text;
          END IF;
        END LOOP;
        -- Each part only when the commit has it: an empty statement still costs its execution.
        v_inserted := '[]'::jsonb;
        v_unleased := 0;
        IF jsonb_array_length(c->'outbox') > 0 THEN
          -- ORDER BY ord: seq is drawn in that order, so rows of one commit keep the caller's order.
          WITH ins AS (
            INSERT INTO ${schema}.outbox AS ob (id, category, kind, stream, payload, status, attempts, not_before,
              lease_owner, lease_until, result, created_at, updated_at, slice)
            SELECT x.v->>'id', x.v->>'category', x.v->>'kind', x.v->>'stream', x.v->'payload', 'pending',
              (x.v->>'attempts')::integer, (x.v->>'not_before')::bigint, x.v->>'lease_owner',
              (x.v->>'lease_until')::bigint, x.v->'result', v_now, v_now, (x.v->>'slice')::integer
            FROM jsonb_array_elements(c->'outbox') WITH ORDINALITY AS x(v, ord)
            ORDER BY x.ord
            ON CONFLICT (id) DO NOTHING
            RETURNING ob.id, ob.seq, ob.lease_owner)
          SELECT coalesce(jsonb_agg(jsonb_build_array(ins.id, ins.seq) ORDER BY ins.seq), '[]'::jsonb),
            count(*) FILTER (WHERE ins.lease_owner IS NULL)
          INTO v_inserted, v_unleased FROM ins;
          -- An effect row not inserted because its key is held must be the same request (stream, kind,
          -- payload without its trace; jsonb equality ignores key order), else the commit fails with
          -- {"reused": id, "held": {...}}. Checked AFTER the insert: ON CONFLICT waited for a concurrent
          -- inserter of the key, and this statement's fresh snapshot sees its row.
          SELECT jsonb_build_object('reused', o.id, 'held', jsonb_build_object('stream', o.stream, 'kind', o.kind,
            'payload', o.payload)) INTO v_reused
          FROM jsonb_array_elements(c->'outbox') AS x(v) JOIN ${schema}.outbox o ON o.id = x.v->>'id'
          WHERE x.v->>'category' = 'effect' AND NOT (v_inserted @> jsonb_build_array(jsonb_build_array(o.id)))
            AND (o.stream <> x.v->>'stream' OR o.kind <> x.v->>'kind'
              OR (CASE WHEN jsonb_typeof(o.payload) = 'object' THEN o.payload - 'trace' ELSE o.payload END)
                IS DISTINCT FROM (CASE WHEN jsonb_typeof((x.v->'payload')) = 'object' THEN (x.v->'payload') - 'trace'
                  ELSE (x.v->'payload') END))
          LIMIT 1;
          IF v_reused IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'OC001', MESSAGE = v_reused::text;
          END IF;
        END IF;
        IF jsonb_array_length(c->'done') > 0 THEN
          UPDATE ${schema}.outbox o SET status = 'done', outcome = x.v->>'outcome', result = x.v->'result',
            lease_owner = NULL, lease_until = NULL, updated_at = v_now
          FROM jsonb_array_elements(c->'done') AS x(v)
          WHERE o.id = x.v->>'id' AND o.status <> 'done';
        END IF;
        IF jsonb_array_length(c->'park') > 0 THEN
          INSERT INTO ${schema}.parked (consumer, source, version, message, parked_at)
          SELECT x.v->>'consumer', x.v->>'source', (x.v->>'version')::integer, x.v->'message', v_now
          FROM jsonb_array_elements(c->'park') AS x(v)
          ON CONFLICT DO NOTHING;
        END IF;
        IF jsonb_array_length(c->'unpark') > 0 THEN
          DELETE FROM ${schema}.parked p USING jsonb_array_elements(c->'unpark') AS x(v)
          WHERE p.consumer = x.v->>'consumer' AND p.source = x.v->>'source' AND p.version = (x.v->>'version')::integer;
        END IF;
        IF jsonb_array_length(c->'dead') > 0 THEN
          INSERT INTO ${schema}.dead_letters
            (id, consumer, message_id, payload, error, stack, attempts, first_failed_at, last_failed_at, status)
          SELECT x.v->>'id', x.v->>'consumer', x.v->>'message_id', x.v->'payload', x.v->>'error', x.v->>'stack',
            (x.v->>'attempts')::integer, (x.v->>'first_failed_at')::bigint, (x.v->>'last_failed_at')::bigint, 'open'
          FROM jsonb_array_elements(c->'dead') AS x(v)
          ON CONFLICT (id) DO NOTHING;
        END IF;
        -- In order: a commit may upsert and then delete the same document.
        FOR v_doc IN SELECT x.v FROM jsonb_array_elements(c->'docs') WITH ORDINALITY AS x(v, ord) ORDER BY x.ord LOOP
          IF (v_doc->>'delete')::boolean THEN
            DELETE FROM ${schema}.documents WHERE collection = v_doc->>'collection' AND id = v_doc->>'id';
          ELSE
            INSERT INTO ${schema}.documents (collection, id, doc, updated_at)
            VALUES (v_doc->>'collection', v_doc->>'id', v_doc->'doc', v_now)
            ON CONFLICT (collection, id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at;
          END IF;
        END LOOP;
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
  RETURN v_results;
END
$oncely$;
