-- A schema as oncely's migrations 1 to 14 made it before the schema was frozen into files
-- (pg_dump --schema-only of one migrated by commit d238b8c, its schema renamed DEV_SCHEMA),
-- with those fourteen versions recorded: test/journal/postgres-schema.int.test.ts upgrades it.
--
-- PostgreSQL database dump
--

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

--
-- Name: DEV_SCHEMA; Type: SCHEMA; Schema: -; Owner: -
--

--
-- Name: oncely_commit(text[], text); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_commit(p_commits text[], p_channel text) RETURNS text[]
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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
      UPDATE "DEV_SCHEMA".outbox SET
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
        SELECT coalesce(max(e.version), 0) INTO v_current FROM "DEV_SCHEMA".events e WHERE e.stream = v_stream;
        IF v_expected IS NOT NULL AND v_expected <> v_current THEN
          RAISE EXCEPTION USING ERRCODE = 'OC001', MESSAGE = jsonb_build_object('conflict', v_current)::text;
        END IF;
        IF v_events > 0 THEN
          INSERT INTO "DEV_SCHEMA".events
            (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
          SELECT v_stream, v_current + x.ord, x.v->>'event_id', x.v->>'type', x.v->'data', x.v->>'causation_id',
            x.v->>'correlation_id', v_now, (x.v->>'schema_version')::integer
          FROM jsonb_array_elements(c->'events') WITH ORDINALITY AS x(v, ord)
          ORDER BY x.ord;
        END IF;
        IF c->'snapshot' IS NOT NULL THEN
          INSERT INTO "DEV_SCHEMA".snapshots (stream, version, schema_version, state, taken_at)
          VALUES (v_stream, (c#>>'{snapshot,version}')::integer, (c#>>'{snapshot,schema_version}')::integer,
            c#>'{snapshot,state}', v_now)
          ON CONFLICT (stream) DO UPDATE SET version = excluded.version, schema_version = excluded.schema_version,
            state = excluded.state, taken_at = excluded.taken_at;
        END IF;
      END IF;
      IF c->'inbox' IS NOT NULL THEN
        -- Migration 10: a final outcome whose row the consumer holds is recorded by the row's done
        -- transition (see InboxEntry.outcomeOf). FOR UPDATE waits for a concurrent writer of the
        -- row and reads its new status, so two outcomes of one row cannot both find it not done.
        v_held := NULL;
        IF c#>>'{inbox,outcome_of}' IS NOT NULL THEN
          SELECT o.status INTO v_held FROM "DEV_SCHEMA".outbox o
          WHERE o.id = c#>>'{inbox,outcome_of}' AND o.stream = c#>>'{inbox,consumer}' AND o.category <> 'event'
          FOR UPDATE;
          IF v_held = 'done' THEN
            RAISE EXCEPTION USING ERRCODE = 'OC001', MESSAGE = '{"duplicate": true}';
          END IF;
        END IF;
        IF v_held IS NULL THEN
          INSERT INTO "DEV_SCHEMA".inbox (consumer, message_id, reply, recorded_at)
          VALUES (c#>>'{inbox,consumer}', c#>>'{inbox,message_id}', c#>'{inbox,reply}', v_now);
        END IF;
      END IF;
      v_cp := c->'checkpoint';
      IF v_cp IS NOT NULL THEN
        IF v_cp->'expected' IS NULL THEN
          INSERT INTO "DEV_SCHEMA".checkpoints (consumer, source, version, updated_at)
          VALUES (v_cp->>'consumer', v_cp->>'source', (v_cp->>'version')::integer, v_now)
          ON CONFLICT (consumer, source) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at;
        ELSIF (v_cp->>'expected')::integer = 0 THEN
          INSERT INTO "DEV_SCHEMA".checkpoints AS cp (consumer, source, version, updated_at)
          VALUES (v_cp->>'consumer', v_cp->>'source', (v_cp->>'version')::integer, v_now)
          ON CONFLICT (consumer, source) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at
          WHERE cp.version = 0;
          GET DIAGNOSTICS v_moved = ROW_COUNT;
        ELSE
          UPDATE "DEV_SCHEMA".checkpoints SET version = (v_cp->>'version')::integer, updated_at = v_now
          WHERE consumer = v_cp->>'consumer' AND source = v_cp->>'source'
            AND version = (v_cp->>'expected')::integer;
          GET DIAGNOSTICS v_moved = ROW_COUNT;
        END IF;
        IF v_moved = 0 THEN
          -- A concurrent writer of the same checkpoint held its row lock; we waited and re-checked.
          SELECT coalesce(max(k.version), 0) INTO v_actual FROM "DEV_SCHEMA".checkpoints k
          WHERE k.consumer = v_cp->>'consumer' AND k.source = v_cp->>'source';
          RAISE EXCEPTION USING ERRCODE = 'OC001', MESSAGE = jsonb_build_object('checkpoint', v_actual)::text;
        END IF;
      END IF;
      -- Each part only when the commit has it: an empty statement still costs its execution.
      v_inserted := '[]'::jsonb;
      v_unleased := 0;
      IF jsonb_array_length(c->'outbox') > 0 THEN
      -- ORDER BY ord: seq is drawn in that order, so rows of one commit keep the caller's order.
      WITH ins AS (
        INSERT INTO "DEV_SCHEMA".outbox AS ob (id, category, kind, stream, payload, status, attempts, not_before, lease_owner,
          lease_until, result, created_at, updated_at)
        SELECT x.v->>'id', x.v->>'category', x.v->>'kind', x.v->>'stream', x.v->'payload', 'pending',
          (x.v->>'attempts')::integer, (x.v->>'not_before')::bigint, x.v->>'lease_owner', (x.v->>'lease_until')::bigint,
          x.v->'result', v_now, v_now
        FROM jsonb_array_elements(c->'outbox') WITH ORDINALITY AS x(v, ord)
        ORDER BY x.ord
        ON CONFLICT (id) DO NOTHING
        RETURNING ob.id, ob.seq, ob.lease_owner)
      SELECT coalesce(jsonb_agg(jsonb_build_array(ins.id, ins.seq) ORDER BY ins.seq), '[]'::jsonb),
        count(*) FILTER (WHERE ins.lease_owner IS NULL)
      INTO v_inserted, v_unleased FROM ins;
      SELECT jsonb_build_object('reused', o.id, 'held', jsonb_build_object('stream', o.stream, 'kind', o.kind,
        'payload', o.payload)) INTO v_reused
      FROM jsonb_array_elements(c->'outbox') AS x(v) JOIN "DEV_SCHEMA".outbox o ON o.id = x.v->>'id'
      WHERE x.v->>'category' = 'effect' AND NOT (v_inserted @> jsonb_build_array(jsonb_build_array(o.id)))
        AND (o.stream <> x.v->>'stream' OR o.kind <> x.v->>'kind' OR (CASE WHEN jsonb_typeof(o.payload) = 'object' THEN o.payload - 'trace' ELSE o.payload END) IS DISTINCT FROM (CASE WHEN jsonb_typeof((x.v->'payload')) = 'object' THEN (x.v->'payload') - 'trace' ELSE (x.v->'payload') END))
      LIMIT 1;
      IF v_reused IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'OC001', MESSAGE = v_reused::text;
      END IF;
      END IF;
      IF jsonb_array_length(c->'done') > 0 THEN
      UPDATE "DEV_SCHEMA".outbox o SET status = 'done', outcome = x.v->>'outcome', result = x.v->'result',
        lease_owner = NULL, lease_until = NULL, updated_at = v_now
      FROM jsonb_array_elements(c->'done') AS x(v)
      WHERE o.id = x.v->>'id' AND o.status <> 'done';
      END IF;
      IF jsonb_array_length(c->'park') > 0 THEN
      INSERT INTO "DEV_SCHEMA".parked (consumer, source, version, message, parked_at)
      SELECT x.v->>'consumer', x.v->>'source', (x.v->>'version')::integer, x.v->'message', v_now
      FROM jsonb_array_elements(c->'park') AS x(v)
      ON CONFLICT DO NOTHING;
      END IF;
      IF jsonb_array_length(c->'unpark') > 0 THEN
      DELETE FROM "DEV_SCHEMA".parked p USING jsonb_array_elements(c->'unpark') AS x(v)
      WHERE p.consumer = x.v->>'consumer' AND p.source = x.v->>'source' AND p.version = (x.v->>'version')::integer;
      END IF;
      IF jsonb_array_length(c->'dead') > 0 THEN
      INSERT INTO "DEV_SCHEMA".dead_letters
        (id, consumer, message_id, payload, error, stack, attempts, first_failed_at, last_failed_at, status)
      SELECT x.v->>'id', x.v->>'consumer', x.v->>'message_id', x.v->'payload', x.v->>'error', x.v->>'stack',
        (x.v->>'attempts')::integer, (x.v->>'first_failed_at')::bigint, (x.v->>'last_failed_at')::bigint, 'open'
      FROM jsonb_array_elements(c->'dead') AS x(v)
      ON CONFLICT (id) DO NOTHING;
      END IF;
      -- In order: a commit may upsert and then delete the same document.
      FOR v_doc IN SELECT x.v FROM jsonb_array_elements(c->'docs') WITH ORDINALITY AS x(v, ord) ORDER BY x.ord LOOP
        IF (v_doc->>'delete')::boolean THEN
          DELETE FROM "DEV_SCHEMA".documents WHERE collection = v_doc->>'collection' AND id = v_doc->>'id';
        ELSE
          INSERT INTO "DEV_SCHEMA".documents (collection, id, doc, updated_at)
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
          SELECT coalesce(max(e.version), 0) INTO v_actual FROM "DEV_SCHEMA".events e WHERE e.stream = v_stream;
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
$$;

--
-- Name: oncely_commit_batch(text[], text); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_commit_batch(p_commits text[], p_channel text) RETURNS text[]
    LANGUAGE plpgsql
    AS $$
DECLARE
  v_results text[];
  v_notify boolean;
  v_rest integer[];
  v_each text[];
BEGIN
  -- One subtransaction for the whole set path: any error in it rolls back all of it, and every
  -- commit of the batch then goes through the per-commit path.
  BEGIN
    SELECT s.results, s.notify INTO v_results, v_notify FROM "DEV_SCHEMA".oncely_commit_set(p_commits) s;
  EXCEPTION WHEN OTHERS THEN
    v_results := array_fill(NULL::text, ARRAY[coalesce(cardinality(p_commits), 0)]);
    v_notify := false;
  END;
  v_rest := ARRAY(SELECT i FROM generate_subscripts(p_commits, 1) AS i WHERE v_results[i] IS NULL ORDER BY i);
  IF cardinality(v_rest) > 0 THEN
    -- In batch order, after the set path; it sends its own NOTIFY when it inserts an unleased row.
    v_each := "DEV_SCHEMA".oncely_commit(ARRAY(SELECT p_commits[i] FROM unnest(v_rest) WITH ORDINALITY AS r(i, ord)
      ORDER BY ord), p_channel);
    FOR k IN 1..cardinality(v_rest) LOOP
      v_results[v_rest[k]] := v_each[k];
    END LOOP;
  END IF;
  IF v_notify THEN
    PERFORM pg_notify(p_channel, '');
  END IF;
  RETURN v_results;
END
$$;

--
-- Name: oncely_commit_json(text, text); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_commit_json(p_commits text, p_channel text) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
  v_c jsonb[];
  v_texts text[];
  v_n integer;
  v_results text[];
  v_notify boolean := false;
  v_rest integer[];
  v_each text[];
BEGIN
  -- One subtransaction for the parse and the whole set path: an error in either rolls all of it
  -- back (variables keep what was assigned), and the commits left unanswered go one at a time.
  BEGIN
    v_c := ARRAY(SELECT e FROM jsonb_array_elements(p_commits::jsonb) AS e);
    IF cardinality(v_c) > 1 THEN
      SELECT s.results, s.notify INTO v_results, v_notify FROM "DEV_SCHEMA".oncely_commit_set(v_c) s;
    END IF;
  EXCEPTION WHEN OTHERS THEN
    v_results := NULL;
    v_notify := false;
  END;
  IF v_c IS NULL THEN
    v_texts := ARRAY(SELECT x::text FROM json_array_elements(p_commits::json) AS x);
  END IF;
  v_n := coalesce(cardinality(v_c), cardinality(v_texts), 0);
  IF v_results IS NULL THEN
    v_results := array_fill(NULL::text, ARRAY[v_n]);
  END IF;
  -- Which commits the set path left unanswered, looked for only when there are some (migration 12).
  IF array_position(v_results, NULL) IS NULL THEN
    v_rest := '{}';
  ELSE
    v_rest := ARRAY(SELECT i FROM generate_series(1, v_n) AS i WHERE v_results[i] IS NULL ORDER BY i);
  END IF;
  IF cardinality(v_rest) > 0 THEN
    -- In batch order, after the set path; it sends its own NOTIFY when it inserts an unleased row.
    v_each := "DEV_SCHEMA".oncely_commit(ARRAY(SELECT coalesce(v_texts[i], v_c[i]::text) FROM unnest(v_rest) WITH ORDINALITY AS r(i, ord)
      ORDER BY ord), p_channel);
    FOR k IN 1..cardinality(v_rest) LOOP
      v_results[v_rest[k]] := v_each[k];
    END LOOP;
  END IF;
  IF v_notify THEN
    PERFORM pg_notify(p_channel, '');
  END IF;
  RETURN '[' || array_to_string(v_results, ',', 'null') || ']';
END
$$;

--
-- Name: oncely_commit_keyed(text, integer[], text); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_commit_keyed(p_commits text, p_later integer[], p_channel text) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
  v_c jsonb[];
  v_texts text[];
  v_n integer;
  v_results text[];
  v_notify boolean := false;
  v_rest integer[];
  v_each text[];
  v_seqs jsonb := '{}';
BEGIN
  -- One subtransaction for the parse and the whole set path: an error in either rolls all of it
  -- back (variables keep what was assigned), and the commits left unanswered go one at a time.
  BEGIN
    v_c := ARRAY(SELECT e FROM jsonb_array_elements(p_commits::jsonb) AS e);
    IF cardinality(v_c) > 1 THEN
      SELECT s.results, s.notify, s.seqs INTO v_results, v_notify, v_seqs FROM "DEV_SCHEMA".oncely_commit_set_keyed(v_c, p_later) s;
    END IF;
  EXCEPTION WHEN OTHERS THEN
    v_results := NULL;
    v_notify := false;
    v_seqs := '{}';
  END;
  IF v_c IS NULL THEN
    v_texts := ARRAY(SELECT x::text FROM json_array_elements(p_commits::json) AS x);
  END IF;
  v_n := coalesce(cardinality(v_c), cardinality(v_texts), 0);
  IF v_results IS NULL THEN
    v_results := array_fill(NULL::text, ARRAY[v_n]);
  END IF;
  -- Which commits the set path left unanswered, looked for only when there are some (migration 12).
  IF array_position(v_results, NULL) IS NULL THEN
    v_rest := '{}';
  ELSE
    v_rest := ARRAY(SELECT i FROM generate_series(1, v_n) AS i WHERE v_results[i] IS NULL ORDER BY i);
  END IF;
  IF cardinality(v_rest) > 0 THEN
    -- In batch order, after the set path; it sends its own NOTIFY when it inserts an unleased row.
    v_each := "DEV_SCHEMA".oncely_commit(ARRAY(SELECT coalesce(v_texts[i], v_c[i]::text) FROM unnest(v_rest) WITH ORDINALITY AS r(i, ord)
      ORDER BY ord), p_channel);
    FOR k IN 1..cardinality(v_rest) LOOP
      v_results[v_rest[k]] := v_each[k];
    END LOOP;
  END IF;
  IF v_notify THEN
    PERFORM pg_notify(p_channel, '');
  END IF;
  RETURN '{"results": [' || array_to_string(v_results, ',', 'null') || '], "seqs": ' || v_seqs::text || '}';
END
$$;

--
-- Name: oncely_commit_packed(text, integer[], text); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_commit_packed(p_commits text, p_later integer[], p_channel text) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
  v_c jsonb[];
  v_texts text[];
  v_n integer;
  v_results text[];
  v_notify boolean := false;
  v_rest integer[];
  v_each text[];
  v_seqs jsonb := '{}';
  v_x json;
BEGIN
  -- One subtransaction for the parse and the whole set path: an error in either rolls all of it
  -- back (variables keep what was assigned), and the commits left unanswered go one at a time.
  BEGIN
    v_c := ARRAY(SELECT e FROM jsonb_array_elements(p_commits::jsonb) AS e);
    IF cardinality(v_c) > 1 THEN
      SELECT s.results, s.notify, s.seqs INTO v_results, v_notify, v_seqs FROM "DEV_SCHEMA".oncely_commit_set_packed(v_c, p_later) s;
    END IF;
  EXCEPTION WHEN OTHERS THEN
    v_results := NULL;
    v_notify := false;
    v_seqs := '{}';
  END;
  IF v_c IS NULL THEN
    -- Each commit that jsonb can hold, unpacked for the per-commit path; the one it cannot, as
    -- sent: the per-commit path fails it alone, with the server's own error.
    v_texts := ARRAY[]::text[];
    FOR v_x IN SELECT x FROM json_array_elements(p_commits::json) AS x LOOP
      BEGIN
        v_texts := v_texts || "DEV_SCHEMA".oncely_unpack(v_x::jsonb)::text;
      EXCEPTION WHEN OTHERS THEN
        v_texts := v_texts || v_x::text;
      END;
    END LOOP;
  END IF;
  v_n := coalesce(cardinality(v_c), cardinality(v_texts), 0);
  IF v_results IS NULL THEN
    v_results := array_fill(NULL::text, ARRAY[v_n]);
  END IF;
  -- Which commits the set path left unanswered, looked for only when there are some (migration 12).
  IF array_position(v_results, NULL) IS NULL THEN
    v_rest := '{}';
  ELSE
    v_rest := ARRAY(SELECT i FROM generate_series(1, v_n) AS i WHERE v_results[i] IS NULL ORDER BY i);
  END IF;
  IF cardinality(v_rest) > 0 THEN
    -- In batch order, after the set path; it sends its own NOTIFY when it inserts an unleased row.
    v_each := "DEV_SCHEMA".oncely_commit(ARRAY(SELECT coalesce(v_texts[i], "DEV_SCHEMA".oncely_unpack(v_c[i])::text) FROM unnest(v_rest) WITH ORDINALITY AS r(i, ord)
      ORDER BY ord), p_channel);
    FOR k IN 1..cardinality(v_rest) LOOP
      v_results[v_rest[k]] := v_each[k];
    END LOOP;
  END IF;
  IF v_notify THEN
    PERFORM pg_notify(p_channel, '');
  END IF;
  RETURN '{"results": [' || array_to_string(v_results, ',', 'null') || '], "seqs": ' || v_seqs::text || '}';
END
$$;

--
-- Name: oncely_commit_set(jsonb[]); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_commit_set(p_commits jsonb[], OUT results text[], OUT notify boolean) RETURNS record
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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
  IF v_n = 0 THEN RETURN; END IF;
  -- Parsed once for every statement below; a commit the server cannot parse raises (fallback).
  v_c := p_commits;

  -- 1. Commits sharing a key (stream, inbox key, outbox id) with an EARLIER commit of the batch:
  --    left to the per-commit path, which runs them after the set path, in batch order.
    v_later := ARRAY(
    SELECT DISTINCT f.ord FROM (
      SELECT k.ord, min(k.ord) OVER (PARTITION BY k.k) AS first FROM (
        SELECT c.ord, 's' || (c.j->>'stream') AS k FROM unnest(v_c) WITH ORDINALITY AS c(j, ord) WHERE c.j ? 'stream'
        UNION ALL SELECT c.ord, 'i' || (c.j#>>'{inbox,consumer}') || chr(1) || (c.j#>>'{inbox,message_id}')
          FROM unnest(v_c) WITH ORDINALITY AS c(j, ord) WHERE c.j->'inbox' IS NOT NULL
        UNION ALL SELECT c.ord, 'o' || (x.v->>'id') FROM unnest(v_c) WITH ORDINALITY AS c(j, ord),
          jsonb_array_elements(coalesce(c.j->'outbox', '[]') || coalesce(c.j->'done', '[]')) x(v) WHERE NOT c.j ? 'update'
        UNION ALL SELECT c.ord, 'o' || (c.j#>>'{update,id}') FROM unnest(v_c) WITH ORDINALITY AS c(j, ord) WHERE c.j ? 'update'
      ) k
    ) f WHERE f.ord > f.first);

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
        CASE WHEN c.taken THEN (SELECT coalesce(max(e.version), 0) FROM "DEV_SCHEMA".events e WHERE e.stream = c.j->>'stream') END AS cur
      FROM (
        SELECT u.ord::integer AS ord, u.j, u.j ? 'update' AS is_update, u.ord = ANY (v_later) AS is_later,
          coalesce(NOT u.j ? 'update' AND u.j->>'stream' IS NOT NULL AND u.j->'checkpoint' IS NULL
            AND jsonb_array_length(u.j->'park') = 0 AND jsonb_array_length(u.j->'unpark') = 0
            AND jsonb_array_length(u.j->'dead') = 0 AND jsonb_array_length(u.j->'docs') = 0
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
      UPDATE "DEV_SCHEMA".outbox o SET
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
      INSERT INTO "DEV_SCHEMA".inbox (consumer, message_id, reply, recorded_at)
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
  INSERT INTO "DEV_SCHEMA".events
    (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
  SELECT v_c[g]->>'stream', v_base[g] + x.ord, x.v->>'event_id', x.v->>'type',
    x.v->'data', x.v->>'causation_id', x.v->>'correlation_id',
    (v_c[g]->>'now')::bigint, (x.v->>'schema_version')::integer
  FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'events') WITH ORDINALITY AS x(v, ord)
  ORDER BY g, x.ord;

  -- Only when some commit has one (counted in 2; duplicates removed in 3 can only make it fewer):
  -- a statement costs its executor start even when it selects nothing (migration 12).
  IF v_snapshots > 0 THEN
    INSERT INTO "DEV_SCHEMA".snapshots AS s (stream, version, schema_version, state, taken_at)
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
      INSERT INTO "DEV_SCHEMA".outbox AS ob (id, category, kind, stream, payload, status, attempts, not_before, lease_owner,
        lease_until, result, created_at, updated_at)
      SELECT x.v->>'id', x.v->>'category', x.v->>'kind',
        x.v->>'stream', x.v->'payload', 'pending', (x.v->>'attempts')::integer,
        (x.v->>'not_before')::bigint, x.v->>'lease_owner',
        (x.v->>'lease_until')::bigint, x.v->'result', (v_c[g]->>'now')::bigint,
        (v_c[g]->>'now')::bigint
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
        JOIN "DEV_SCHEMA".outbox o ON o.id = x.v->>'id'
        WHERE x.v->>'category' = 'effect'
          AND (o.stream <> x.v->>'stream' OR o.kind <> x.v->>'kind'
            OR (CASE WHEN jsonb_typeof(o.payload) = 'object' THEN o.payload - 'trace' ELSE o.payload END) IS DISTINCT FROM (CASE WHEN jsonb_typeof((x.v->'payload')) = 'object' THEN (x.v->'payload') - 'trace' ELSE (x.v->'payload') END))
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
      UPDATE "DEV_SCHEMA".outbox o SET status = 'done', outcome = d.v->>'outcome', result = d.v->'result',
        lease_owner = NULL, lease_until = NULL, updated_at = d.now
      FROM (
        SELECT DISTINCT ON (x.v->>'id') x.v, (v_c[g]->>'now')::bigint AS now,
          v_byrow[g] AND x.v->>'id' = v_c[g]#>>'{inbox,outcome_of}' AS by_row,
          v_c[g]#>>'{inbox,consumer}' AS consumer
        FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'done') WITH ORDINALITY AS x(v, ord)
        ORDER BY x.v->>'id', x.ord
      ) d
      WHERE o.id = d.v->>'id' AND o.status <> 'done'
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
    SELECT CASE WHEN results[i] IS NULL AND v_base[i] IS NOT NULL
      THEN '{"version": ' || (v_base[i] + jsonb_array_length(v_c[i]->'events')) || ', "inserted": ' || coalesce((
        SELECT jsonb_agg(jsonb_build_array(d.id, v_seqs->d.id) ORDER BY (v_seqs->>d.id)::bigint)
        FROM (SELECT DISTINCT x.v->>'id' AS id FROM jsonb_array_elements(v_c[i]->'outbox') AS x(v)) d
        WHERE v_seqs ? d.id), '[]') || '}'
      ELSE results[i] END
    FROM generate_series(1, v_n) AS i ORDER BY i);

END
$$;

--
-- Name: oncely_commit_set(text[]); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_commit_set(p_commits text[], OUT results text[], OUT notify boolean) RETURNS record
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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
  IF v_n = 0 THEN RETURN; END IF;
  -- Parsed once for every statement below; a commit the server cannot parse raises (fallback).
  v_c := p_commits::jsonb[];

  -- 1. Commits sharing a key (stream, inbox key, outbox id) with an EARLIER commit of the batch:
  --    left to the per-commit path, which runs them after the set path, in batch order.
    v_later := ARRAY(
    SELECT DISTINCT f.ord FROM (
      SELECT k.ord, min(k.ord) OVER (PARTITION BY k.k) AS first FROM (
        SELECT c.ord, 's' || (c.j->>'stream') AS k FROM unnest(v_c) WITH ORDINALITY AS c(j, ord) WHERE c.j ? 'stream'
        UNION ALL SELECT c.ord, 'i' || (c.j#>>'{inbox,consumer}') || chr(1) || (c.j#>>'{inbox,message_id}')
          FROM unnest(v_c) WITH ORDINALITY AS c(j, ord) WHERE c.j->'inbox' IS NOT NULL
        UNION ALL SELECT c.ord, 'o' || (x.v->>'id') FROM unnest(v_c) WITH ORDINALITY AS c(j, ord),
          jsonb_array_elements(coalesce(c.j->'outbox', '[]') || coalesce(c.j->'done', '[]')) x(v) WHERE NOT c.j ? 'update'
        UNION ALL SELECT c.ord, 'o' || (c.j#>>'{update,id}') FROM unnest(v_c) WITH ORDINALITY AS c(j, ord) WHERE c.j ? 'update'
      ) k
    ) f WHERE f.ord > f.first);

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
        CASE WHEN c.taken THEN (SELECT coalesce(max(e.version), 0) FROM "DEV_SCHEMA".events e WHERE e.stream = c.j->>'stream') END AS cur
      FROM (
        SELECT u.ord::integer AS ord, u.j, u.j ? 'update' AS is_update, u.ord = ANY (v_later) AS is_later,
          coalesce(NOT u.j ? 'update' AND u.j->>'stream' IS NOT NULL AND u.j->'checkpoint' IS NULL
            AND jsonb_array_length(u.j->'park') = 0 AND jsonb_array_length(u.j->'unpark') = 0
            AND jsonb_array_length(u.j->'dead') = 0 AND jsonb_array_length(u.j->'docs') = 0
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
      UPDATE "DEV_SCHEMA".outbox o SET
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
      INSERT INTO "DEV_SCHEMA".inbox (consumer, message_id, reply, recorded_at)
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
  INSERT INTO "DEV_SCHEMA".events
    (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
  SELECT v_c[g]->>'stream', v_base[g] + x.ord, x.v->>'event_id', x.v->>'type',
    x.v->'data', x.v->>'causation_id', x.v->>'correlation_id',
    (v_c[g]->>'now')::bigint, (x.v->>'schema_version')::integer
  FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'events') WITH ORDINALITY AS x(v, ord)
  ORDER BY g, x.ord;

  -- Only when some commit has one (counted in 2; duplicates removed in 3 can only make it fewer):
  -- a statement costs its executor start even when it selects nothing (migration 12).
  IF v_snapshots > 0 THEN
    INSERT INTO "DEV_SCHEMA".snapshots AS s (stream, version, schema_version, state, taken_at)
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
      INSERT INTO "DEV_SCHEMA".outbox AS ob (id, category, kind, stream, payload, status, attempts, not_before, lease_owner,
        lease_until, result, created_at, updated_at)
      SELECT x.v->>'id', x.v->>'category', x.v->>'kind',
        x.v->>'stream', x.v->'payload', 'pending', (x.v->>'attempts')::integer,
        (x.v->>'not_before')::bigint, x.v->>'lease_owner',
        (x.v->>'lease_until')::bigint, x.v->'result', (v_c[g]->>'now')::bigint,
        (v_c[g]->>'now')::bigint
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
        JOIN "DEV_SCHEMA".outbox o ON o.id = x.v->>'id'
        WHERE x.v->>'category' = 'effect'
          AND (o.stream <> x.v->>'stream' OR o.kind <> x.v->>'kind'
            OR (CASE WHEN jsonb_typeof(o.payload) = 'object' THEN o.payload - 'trace' ELSE o.payload END) IS DISTINCT FROM (CASE WHEN jsonb_typeof((x.v->'payload')) = 'object' THEN (x.v->'payload') - 'trace' ELSE (x.v->'payload') END))
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
      UPDATE "DEV_SCHEMA".outbox o SET status = 'done', outcome = d.v->>'outcome', result = d.v->'result',
        lease_owner = NULL, lease_until = NULL, updated_at = d.now
      FROM (
        SELECT DISTINCT ON (x.v->>'id') x.v, (v_c[g]->>'now')::bigint AS now,
          v_byrow[g] AND x.v->>'id' = v_c[g]#>>'{inbox,outcome_of}' AS by_row,
          v_c[g]#>>'{inbox,consumer}' AS consumer
        FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'done') WITH ORDINALITY AS x(v, ord)
        ORDER BY x.v->>'id', x.ord
      ) d
      WHERE o.id = d.v->>'id' AND o.status <> 'done'
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
    SELECT CASE WHEN results[i] IS NULL AND v_base[i] IS NOT NULL
      THEN '{"version": ' || (v_base[i] + jsonb_array_length(v_c[i]->'events')) || ', "inserted": ' || coalesce((
        SELECT jsonb_agg(jsonb_build_array(d.id, v_seqs->d.id) ORDER BY (v_seqs->>d.id)::bigint)
        FROM (SELECT DISTINCT x.v->>'id' AS id FROM jsonb_array_elements(v_c[i]->'outbox') AS x(v)) d
        WHERE v_seqs ? d.id), '[]') || '}'
      ELSE results[i] END
    FROM generate_series(1, v_n) AS i ORDER BY i);

END
$$;

--
-- Name: oncely_commit_set_keyed(jsonb[], integer[]); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_commit_set_keyed(p_commits jsonb[], p_later integer[], OUT results text[], OUT notify boolean, OUT seqs jsonb) RETURNS record
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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
  -- Named by the client (see commit-json-function.ts).
  v_later := coalesce(p_later, '{}');

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
        CASE WHEN c.taken THEN (SELECT coalesce(max(e.version), 0) FROM "DEV_SCHEMA".events e WHERE e.stream = c.j->>'stream') END AS cur
      FROM (
        SELECT u.ord::integer AS ord, u.j, u.j ? 'update' AS is_update, u.ord = ANY (v_later) AS is_later,
          coalesce(NOT u.j ? 'update' AND u.j->>'stream' IS NOT NULL AND u.j->'checkpoint' IS NULL
            AND jsonb_array_length(u.j->'park') = 0 AND jsonb_array_length(u.j->'unpark') = 0
            AND jsonb_array_length(u.j->'dead') = 0 AND jsonb_array_length(u.j->'docs') = 0
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
      UPDATE "DEV_SCHEMA".outbox o SET
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
      INSERT INTO "DEV_SCHEMA".inbox (consumer, message_id, reply, recorded_at)
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
  INSERT INTO "DEV_SCHEMA".events
    (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
  SELECT v_c[g]->>'stream', v_base[g] + x.ord, x.v->>'event_id', x.v->>'type',
    x.v->'data', x.v->>'causation_id', x.v->>'correlation_id',
    (v_c[g]->>'now')::bigint, (x.v->>'schema_version')::integer
  FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'events') WITH ORDINALITY AS x(v, ord)
  ORDER BY g, x.ord;

  -- Only when some commit has one (counted in 2; duplicates removed in 3 can only make it fewer):
  -- a statement costs its executor start even when it selects nothing (migration 12).
  IF v_snapshots > 0 THEN
    INSERT INTO "DEV_SCHEMA".snapshots AS s (stream, version, schema_version, state, taken_at)
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
      INSERT INTO "DEV_SCHEMA".outbox AS ob (id, category, kind, stream, payload, status, attempts, not_before, lease_owner,
        lease_until, result, created_at, updated_at)
      SELECT x.v->>'id', x.v->>'category', x.v->>'kind',
        x.v->>'stream', x.v->'payload', 'pending', (x.v->>'attempts')::integer,
        (x.v->>'not_before')::bigint, x.v->>'lease_owner',
        (x.v->>'lease_until')::bigint, x.v->'result', (v_c[g]->>'now')::bigint,
        (v_c[g]->>'now')::bigint
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
        JOIN "DEV_SCHEMA".outbox o ON o.id = x.v->>'id'
        WHERE x.v->>'category' = 'effect'
          AND (o.stream <> x.v->>'stream' OR o.kind <> x.v->>'kind'
            OR (CASE WHEN jsonb_typeof(o.payload) = 'object' THEN o.payload - 'trace' ELSE o.payload END) IS DISTINCT FROM (CASE WHEN jsonb_typeof((x.v->'payload')) = 'object' THEN (x.v->'payload') - 'trace' ELSE (x.v->'payload') END))
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
      UPDATE "DEV_SCHEMA".outbox o SET status = 'done', outcome = d.v->>'outcome', result = d.v->'result',
        lease_owner = NULL, lease_until = NULL, updated_at = d.now
      FROM (
        SELECT DISTINCT ON (x.v->>'id') x.v, (v_c[g]->>'now')::bigint AS now,
          v_byrow[g] AND x.v->>'id' = v_c[g]#>>'{inbox,outcome_of}' AS by_row,
          v_c[g]#>>'{inbox,consumer}' AS consumer
        FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'done') WITH ORDINALITY AS x(v, ord)
        ORDER BY x.v->>'id', x.ord
      ) d
      WHERE o.id = d.v->>'id' AND o.status <> 'done'
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
$$;

--
-- Name: oncely_commit_set_packed(jsonb[], integer[]); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_commit_set_packed(p_commits jsonb[], p_later integer[], OUT results text[], OUT notify boolean, OUT seqs jsonb) RETURNS record
    LANGUAGE plpgsql
    SET enable_seqscan TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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
  -- Named by the client (see commit-json-function.ts).
  v_later := coalesce(p_later, '{}');

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
        CASE WHEN c.taken THEN (SELECT coalesce(max(e.version), 0) FROM "DEV_SCHEMA".events e WHERE e.stream = c.j->>'stream') END AS cur
      FROM (
        SELECT u.ord::integer AS ord, u.j, u.j ? 'update' AS is_update, u.ord = ANY (v_later) AS is_later,
          coalesce(NOT u.j ? 'update' AND u.j->>'stream' IS NOT NULL AND u.j->'checkpoint' IS NULL
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
      UPDATE "DEV_SCHEMA".outbox o SET
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
      INSERT INTO "DEV_SCHEMA".inbox (consumer, message_id, reply, recorded_at)
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
  INSERT INTO "DEV_SCHEMA".events
    (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
  SELECT v_c[g]->>'stream', v_base[g] + x.ord, x.v->>0, x.v->>1,
    x.v->2, x.v->>3, x.v->>4,
    (v_c[g]->>'now')::bigint, (x.v->>5)::integer
  FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'events') WITH ORDINALITY AS x(v, ord)
  ORDER BY g, x.ord;

  -- Only when some commit has one (counted in 2; duplicates removed in 3 can only make it fewer):
  -- a statement costs its executor start even when it selects nothing (migration 12).
  IF v_snapshots > 0 THEN
    INSERT INTO "DEV_SCHEMA".snapshots AS s (stream, version, schema_version, state, taken_at)
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
      INSERT INTO "DEV_SCHEMA".outbox AS ob (id, category, kind, stream, payload, status, attempts, not_before, lease_owner,
        lease_until, result, created_at, updated_at)
      SELECT x.v->>0, x.v->>1, x.v->>2,
        x.v->>3, x.v->4, 'pending', (x.v->>8)::integer,
        (x.v->>5)::bigint, x.v->>6,
        (x.v->>7)::bigint, x.v->9, (v_c[g]->>'now')::bigint,
        (v_c[g]->>'now')::bigint
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
        JOIN "DEV_SCHEMA".outbox o ON o.id = x.v->>0
        WHERE x.v->>1 = 'effect'
          AND (o.stream <> x.v->>3 OR o.kind <> x.v->>2
            OR (CASE WHEN jsonb_typeof(o.payload) = 'object' THEN o.payload - 'trace' ELSE o.payload END) IS DISTINCT FROM (CASE WHEN jsonb_typeof((x.v->4)) = 'object' THEN (x.v->4) - 'trace' ELSE (x.v->4) END))
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
      UPDATE "DEV_SCHEMA".outbox o SET status = 'done', outcome = d.v->>1, result = d.v->2,
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
$$;

--
-- Name: oncely_publish(text, text, text, bigint); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_publish(p_message_id text, p_subject text, p_body text, p_now bigint) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
    DECLARE
      found_position bigint;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('oncely.published:DEV_SCHEMA', 0));
      SELECT position INTO found_position FROM "DEV_SCHEMA".published WHERE message_id = p_message_id;
      IF FOUND THEN
        RETURN found_position;
      END IF;
      INSERT INTO "DEV_SCHEMA".published (message_id, subject, body, published_at)
        VALUES (p_message_id, p_subject, p_body, p_now)
        RETURNING position INTO found_position;
      PERFORM pg_notify('oncely_published_DEV_SCHEMA', '');
      RETURN found_position;
    END
    $$;

--
-- Name: oncely_publish_batch(text[], text[], text[], bigint[]); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_publish_batch(p_message_ids text[], p_subjects text[], p_bodies text[], p_nows bigint[]) RETURNS bigint[]
    LANGUAGE plpgsql
    AS $$
    DECLARE
      positions bigint[] := '{}';
      found_position bigint;
      appended boolean := false;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('oncely.published:DEV_SCHEMA', 0));
      FOR i IN 1 .. coalesce(array_length(p_message_ids, 1), 0) LOOP
        SELECT position INTO found_position FROM "DEV_SCHEMA".published WHERE message_id = p_message_ids[i];
        IF NOT FOUND THEN
          INSERT INTO "DEV_SCHEMA".published (message_id, subject, body, published_at)
            VALUES (p_message_ids[i], p_subjects[i], p_bodies[i], p_nows[i])
            RETURNING position INTO found_position;
          appended := true;
        END IF;
        positions := positions || found_position;
      END LOOP;
      IF appended THEN
        PERFORM pg_notify('oncely_published_DEV_SCHEMA', '');
      END IF;
      RETURN positions;
    END
    $$;

--
-- Name: oncely_unpack(jsonb); Type: FUNCTION; Schema: DEV_SCHEMA; Owner: -
--

CREATE FUNCTION DEV_SCHEMA.oncely_unpack(c jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT CASE WHEN c ? 'update' THEN c ELSE c || jsonb_build_object(
    'events', (SELECT coalesce(jsonb_agg(jsonb_build_object('event_id', r.v->0, 'type', r.v->1, 'data', r.v->2, 'causation_id', r.v->3, 'correlation_id', r.v->4, 'schema_version', r.v->5) ORDER BY r.n), '[]'::jsonb) FROM jsonb_array_elements(c->'events') WITH ORDINALITY AS r(v, n)),
    'outbox', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.v->0, 'category', r.v->1, 'kind', r.v->2, 'stream', r.v->3, 'payload', r.v->4, 'not_before', r.v->5, 'lease_owner', r.v->6, 'lease_until', r.v->7, 'attempts', r.v->8, 'result', r.v->9) ORDER BY r.n), '[]'::jsonb) FROM jsonb_array_elements(c->'outbox') WITH ORDINALITY AS r(v, n)),
    'done', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.v->0, 'outcome', r.v->1, 'result', r.v->2) ORDER BY r.n), '[]'::jsonb) FROM jsonb_array_elements(c->'done') WITH ORDINALITY AS r(v, n)),
    'park', coalesce(c->'park', '[]'::jsonb), 'unpark', coalesce(c->'unpark', '[]'::jsonb), 'dead', coalesce(c->'dead', '[]'::jsonb), 'docs', coalesce(c->'docs', '[]'::jsonb)) END
$$;

--
-- Name: checkpoints; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.checkpoints (
    consumer text NOT NULL,
    source text NOT NULL,
    version integer NOT NULL,
    updated_at bigint NOT NULL
);

--
-- Name: dead_letters; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.dead_letters (
    id text NOT NULL COLLATE pg_catalog."C",
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

--
-- Name: documents; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.documents (
    collection text NOT NULL,
    id text NOT NULL COLLATE pg_catalog."C",
    doc jsonb NOT NULL,
    updated_at bigint NOT NULL
);

--
-- Name: events; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.events (
    global_position bigint NOT NULL,
    stream text NOT NULL COLLATE pg_catalog."C",
    version integer NOT NULL,
    event_id text NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    causation_id text,
    correlation_id text,
    recorded_at bigint NOT NULL,
    schema_version integer NOT NULL
);

--
-- Name: events_global_position_seq; Type: SEQUENCE; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE DEV_SCHEMA.events ALTER COLUMN global_position ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME DEV_SCHEMA.events_global_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: inbox; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.inbox (
    consumer text NOT NULL,
    message_id text NOT NULL,
    reply jsonb NOT NULL,
    recorded_at bigint NOT NULL
);

--
-- Name: oncely_schema_migrations; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.oncely_schema_migrations (
    version integer NOT NULL,
    applied_at bigint NOT NULL
);

--
-- Name: outbox; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.outbox (
    id text NOT NULL,
    seq bigint NOT NULL,
    category text NOT NULL,
    kind text NOT NULL,
    stream text NOT NULL COLLATE pg_catalog."C",
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

--
-- Name: outbox_seq_seq; Type: SEQUENCE; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE DEV_SCHEMA.outbox ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME DEV_SCHEMA.outbox_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: parked; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.parked (
    consumer text NOT NULL,
    source text NOT NULL COLLATE pg_catalog."C",
    version integer NOT NULL,
    message jsonb NOT NULL,
    parked_at bigint NOT NULL
);

--
-- Name: published; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.published (
    "position" bigint NOT NULL,
    message_id text NOT NULL COLLATE pg_catalog."C",
    subject text NOT NULL,
    body text NOT NULL,
    published_at bigint NOT NULL
);

--
-- Name: published_position_seq; Type: SEQUENCE; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE DEV_SCHEMA.published ALTER COLUMN "position" ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME DEV_SCHEMA.published_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: snapshots; Type: TABLE; Schema: DEV_SCHEMA; Owner: -
--

CREATE TABLE DEV_SCHEMA.snapshots (
    stream text NOT NULL COLLATE pg_catalog."C",
    version integer NOT NULL,
    schema_version integer NOT NULL,
    state jsonb NOT NULL,
    taken_at bigint NOT NULL
);

--
-- Name: checkpoints checkpoints_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.checkpoints
    ADD CONSTRAINT checkpoints_pkey PRIMARY KEY (consumer, source);

--
-- Name: dead_letters dead_letters_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.dead_letters
    ADD CONSTRAINT dead_letters_pkey PRIMARY KEY (id);

--
-- Name: documents documents_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.documents
    ADD CONSTRAINT documents_pkey PRIMARY KEY (collection, id);

--
-- Name: events events_event_id_key; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.events
    ADD CONSTRAINT events_event_id_key UNIQUE (event_id);

--
-- Name: events events_global_position_key; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.events
    ADD CONSTRAINT events_global_position_key UNIQUE (global_position);

--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (stream, version);

--
-- Name: inbox inbox_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.inbox
    ADD CONSTRAINT inbox_pkey PRIMARY KEY (consumer, message_id);

--
-- Name: oncely_schema_migrations oncely_schema_migrations_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.oncely_schema_migrations
    ADD CONSTRAINT oncely_schema_migrations_pkey PRIMARY KEY (version);

--
-- Name: outbox outbox_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);

--
-- Name: outbox outbox_seq_key; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.outbox
    ADD CONSTRAINT outbox_seq_key UNIQUE (seq);

--
-- Name: parked parked_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.parked
    ADD CONSTRAINT parked_pkey PRIMARY KEY (consumer, source, version);

--
-- Name: published published_message_id_key; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.published
    ADD CONSTRAINT published_message_id_key UNIQUE (message_id);

--
-- Name: published published_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.published
    ADD CONSTRAINT published_pkey PRIMARY KEY ("position");

--
-- Name: snapshots snapshots_pkey; Type: CONSTRAINT; Schema: DEV_SCHEMA; Owner: -
--

ALTER TABLE ONLY DEV_SCHEMA.snapshots
    ADD CONSTRAINT snapshots_pkey PRIMARY KEY (stream);

--
-- Name: dead_letters_list; Type: INDEX; Schema: DEV_SCHEMA; Owner: -
--

CREATE INDEX dead_letters_list ON DEV_SCHEMA.dead_letters USING btree (consumer, status, first_failed_at);

--
-- Name: inbox_recorded_at; Type: INDEX; Schema: DEV_SCHEMA; Owner: -
--

CREATE INDEX inbox_recorded_at ON DEV_SCHEMA.inbox USING btree (recorded_at);

--
-- Name: outbox_claim; Type: INDEX; Schema: DEV_SCHEMA; Owner: -
--

CREATE INDEX outbox_claim ON DEV_SCHEMA.outbox USING btree (status, not_before) WHERE (status <> ALL (ARRAY['done'::text, 'dead'::text]));

--
-- Name: outbox_stream_order; Type: INDEX; Schema: DEV_SCHEMA; Owner: -
--

CREATE INDEX outbox_stream_order ON DEV_SCHEMA.outbox USING btree (stream, category, seq) WHERE ((status <> ALL (ARRAY['done'::text, 'dead'::text])) AND (category <> 'effect'::text));

--
-- PostgreSQL database dump complete
--

INSERT INTO DEV_SCHEMA.oncely_schema_migrations (version, applied_at) SELECT v, 0 FROM generate_series(1, 14) AS v;
