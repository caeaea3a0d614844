-- Migration 0010: oncely_commit as in 0009_commit_parts, with one more argument, `wake`, the payload of
-- its NOTIFY on `channel`: what the call adds for somebody to claim, the categories and slices of its
-- rows inserted unleased and due now, written by the client (commit-batch.ts `batchWakePayload`, format
-- in src/journal/outbox-signal.ts). A listener owning some slices wakes only for rows of those, so a
-- commit wakes the owner of its rows, not every worker. The NOTIFY is sent exactly when 0009 sent it.
-- `wake` defaults to '': a client of the previous release, still running during a rolling upgrade,
-- calls the function with two arguments as before, and its empty payload wakes every listener.
--
-- oncely_commit(commits text[], channel text, wake text) -> text[]: the per-commit path of group commit.
-- Everything else, what each commit does, its subtransaction, its results: see
-- 0009_commit_parts/oncely_commit.sql, which this repeats statement for statement.
DROP FUNCTION ${schema}.oncely_commit(text[], text);
CREATE FUNCTION ${schema}.oncely_commit(p_commits text[], p_channel text, p_wake text DEFAULT '') RETURNS text[]
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
    PERFORM pg_notify(p_channel, p_wake);
  END IF;
  IF v_published THEN
    PERFORM pg_notify(${published_channel}, '');
  END IF;
  RETURN v_results;
END
$oncely$;
