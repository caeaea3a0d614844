import { identity } from "./commit-function.js";
import { KEY_LOOKUP_PLANS } from "./key-lookup-plans.js";
import type { Tables } from "./tables.js";

/**
 * Migration 5: group commit applied set-wise. `oncely_commit_batch(commits text[], channel text)`
 * is what the client calls; it answers exactly as `oncely_commit` (commit-function.ts) does, one
 * JSON text per commit, but applies the common commits with ONE statement per table for the whole
 * batch instead of a subtransaction and eight statements per commit (measured: about 0.5 ms per
 * commit inside `oncely_commit`, which bounded PostgreSQL throughput with one batch in flight).
 *
 * The set path (`oncely_commit_set`) takes a commit when it has a stream and touches only events,
 * its snapshot, the inbox and outbox rows (insert, done), and a dispatcher's lease-held outbox
 * update, when no EARLIER write of the batch touches the same stream, inbox key or outbox id. The
 * others (checkpoints, parked, dead letters, documents, and later writes sharing a key) are left to `oncely_commit`, run
 * on them afterwards in batch order. Commits that share no key commute, and commits that share
 * one keep their batch order, so the outcome is that of applying the batch one commit at a time.
 *
 * Each commit keeps its own fate without a subtransaction: the guards are evaluated set-wise
 * BEFORE anything is written, and a failing commit is answered and left out of every insert:
 *  - expected version: the stream's current version is read per stream and compared;
 *  - effect key reuse: the rows already holding a commit's effect keys are compared with its rows;
 *  - duplicate message id: the inbox rows are inserted first, ON CONFLICT DO NOTHING, and a commit
 *    whose row was not inserted is a duplicate (nothing else of it is written).
 * What the guards cannot see is another transaction racing on the same keys (an append to the same
 * stream, an event id already used, an effect key inserted concurrently with another request): the
 * insert then raises or the check after it fails, the whole set path rolls back (its one
 * subtransaction), and `oncely_commit` applies the entire batch one commit at a time, as before,
 * where each such race is answered per commit. Any other error in the set path (a value the server
 * refuses, e.g. a NUL byte in JSON text) takes the same fallback, so the set path never decides a
 * commit's fate differently from the per-commit path.
 */
export const commitSetFunctionSql = (
  t: Tables,
  options: { keyLookups?: boolean; input?: "text" | "jsonb"; withBatchFunction?: boolean } = {},
): string => `
CREATE OR REPLACE FUNCTION ${t.commitSetFunction}(p_commits ${options.input ?? "text"}[], OUT results text[], OUT notify boolean)
LANGUAGE plpgsql ${options.keyLookups ? KEY_LOOKUP_PLANS : ""} AS $oncely$
DECLARE
  v_c jsonb[];
  v_n integer := coalesce(cardinality(p_commits), 0);
  v_base integer[];
  v_go integer[];
  v_dup integer[];
  v_rows integer;
  v_events integer;
  v_outbox integer;
  v_inserted jsonb[];
  v_upd integer[];
  v_upd_results text[];
  v_upd_notify boolean;
  v_unleased boolean;
BEGIN
  results := array_fill(NULL::text, ARRAY[v_n]);
  notify := false;
  IF v_n = 0 THEN RETURN; END IF;
  -- Parsed once for every statement below; a commit the server cannot parse raises (fallback).
  v_c := p_commits${options.input === "jsonb" ? "" : "::jsonb[]"};

  -- 1. Which commits the set path takes, their stream's current version, and the guards that need
  --    no write: a version conflict or a reused effect key answers the commit here.
  WITH c AS (
    SELECT ord::integer AS ord, j FROM unnest(v_c) WITH ORDINALITY AS u(j, ord)
  ), keys AS (
    SELECT ord, 's' || (j->>'stream') AS k FROM c WHERE j ? 'stream'
    UNION ALL SELECT ord, 'i' || (j#>>'{inbox,consumer}') || chr(1) || (j#>>'{inbox,message_id}')
      FROM c WHERE j->'inbox' IS NOT NULL
    UNION ALL SELECT c.ord, 'o' || (x.v->>'id') FROM c, jsonb_array_elements(coalesce(c.j->'outbox', '[]')) x(v)
      WHERE NOT c.j ? 'update'
    UNION ALL SELECT c.ord, 'o' || (x.v->>'id') FROM c, jsonb_array_elements(coalesce(c.j->'done', '[]')) x(v)
      WHERE NOT c.j ? 'update'
    UNION ALL SELECT ord, 'o' || (j#>>'{update,id}') FROM c WHERE j ? 'update'
  ), later AS (
    SELECT DISTINCT ord FROM (SELECT ord, min(ord) OVER (PARTITION BY k) AS first FROM keys) f WHERE ord > first
  ), taken AS (
    SELECT c.ord, c.j,
      (SELECT coalesce(max(e.version), 0) FROM ${t.events} e WHERE e.stream = c.j->>'stream') AS current
    FROM c
    WHERE NOT c.j ? 'update' AND c.j->>'stream' IS NOT NULL AND c.j->'checkpoint' IS NULL
      AND jsonb_array_length(c.j->'park') = 0 AND jsonb_array_length(c.j->'unpark') = 0
      AND jsonb_array_length(c.j->'dead') = 0 AND jsonb_array_length(c.j->'docs') = 0
      AND NOT EXISTS (SELECT 1 FROM later l WHERE l.ord = c.ord)
  ), judged AS (
    SELECT tk.ord, tk.current,
      CASE WHEN tk.j->>'expected' IS NOT NULL AND (tk.j->>'expected')::integer <> tk.current
        THEN jsonb_build_object('conflict', tk.current)::text
      ELSE (
        SELECT jsonb_build_object('reused', o.id, 'held', jsonb_build_object('stream', o.stream, 'kind', o.kind,
          'payload', o.payload))::text
        FROM jsonb_array_elements(tk.j->'outbox') AS x(v) JOIN ${t.outbox} o ON o.id = x.v->>'id'
        WHERE x.v->>'category' = 'effect'
          AND (o.stream <> x.v->>'stream' OR o.kind <> x.v->>'kind' OR ${identity("o.payload")} IS DISTINCT FROM ${identity("(x.v->'payload')")})
        LIMIT 1)
      END AS refused
    FROM taken tk
  ), base AS (
    SELECT array_agg(cur ORDER BY i) AS base FROM (
      SELECT i, (SELECT j.current FROM judged j WHERE j.ord = i AND j.refused IS NULL) AS cur
      FROM generate_series(1, v_n) AS i) b
  )
  SELECT (SELECT base FROM base),
    (SELECT coalesce(array_agg(ord ORDER BY ord), '{}') FROM judged WHERE refused IS NULL),
    (SELECT array_agg(refused ORDER BY i) FROM (
      SELECT i, (SELECT j.refused FROM judged j WHERE j.ord = i) AS refused FROM generate_series(1, v_n) AS i) r),
    (SELECT coalesce(array_agg(c.ord ORDER BY c.ord), '{}') FROM c
      WHERE c.j ? 'update' AND NOT EXISTS (SELECT 1 FROM later l WHERE l.ord = c.ord))
  INTO v_base, v_go, results, v_upd;

  -- Lease-held outbox updates (a dispatcher recording an attempt), one statement for all; each
  -- answers the row's new status, or null when the lease was not held (or the row is done).
  IF cardinality(v_upd) > 0 THEN
    WITH u AS (
      SELECT g, v_c[g]->'update' AS v FROM unnest(v_upd) AS g
    ), upd AS (
      UPDATE ${t.outbox} o SET
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

  -- 2. The inbox rows first: a commit whose row is already there is a duplicate, and nothing else
  --    of it is written. (A concurrent inserter of the key is waited for, then seen as present.)
  WITH ins AS (
    INSERT INTO ${t.inbox} (consumer, message_id, reply, recorded_at)
    SELECT v_c[g]#>>'{inbox,consumer}', v_c[g]#>>'{inbox,message_id}', v_c[g]#>'{inbox,reply}',
      (v_c[g]->>'now')::bigint
    FROM unnest(v_go) AS g WHERE v_c[g]->'inbox' IS NOT NULL
    ORDER BY g
    ON CONFLICT DO NOTHING
    RETURNING consumer, message_id)
  SELECT coalesce(array_agg(g), '{}') INTO v_dup FROM unnest(v_go) AS g
  WHERE v_c[g]->'inbox' IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM ins WHERE ins.consumer = v_c[g]#>>'{inbox,consumer}' AND ins.message_id = v_c[g]#>>'{inbox,message_id}');
  IF cardinality(v_dup) > 0 THEN
    FOR i IN 1..cardinality(v_dup) LOOP
      results[v_dup[i]] := '{"duplicate": true}';
    END LOOP;
    v_go := ARRAY(SELECT g FROM unnest(v_go) AS g WHERE g <> ALL (v_dup) ORDER BY g);
    IF cardinality(v_go) = 0 THEN RETURN; END IF;
  END IF;

  -- 3. Events, at the versions read in 1. A writer that appended since raises a unique violation
  --    (as does an event id already used): the fallback answers it per commit.
  INSERT INTO ${t.events}
    (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
  SELECT v_c[g]->>'stream', v_base[g] + x.ord, x.v->>'event_id', x.v->>'type', x.v->'data', x.v->>'causation_id',
    x.v->>'correlation_id', (v_c[g]->>'now')::bigint, (x.v->>'schema_version')::integer
  FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'events') WITH ORDINALITY AS x(v, ord)
  ORDER BY g, x.ord;

  INSERT INTO ${t.snapshots} AS s (stream, version, schema_version, state, taken_at)
  SELECT v_c[g]->>'stream', (v_c[g]#>>'{snapshot,version}')::integer, (v_c[g]#>>'{snapshot,schema_version}')::integer,
    v_c[g]#>'{snapshot,state}', (v_c[g]->>'now')::bigint
  FROM unnest(v_go) AS g WHERE v_c[g]->'snapshot' IS NOT NULL
  ON CONFLICT (stream) DO UPDATE SET version = excluded.version, schema_version = excluded.schema_version,
    state = excluded.state, taken_at = excluded.taken_at;

  -- 4. Outbox rows, seq drawn in batch order then row order; an id already held is not inserted.
  WITH rows AS (
    SELECT g, x.ord, x.v FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'outbox') WITH ORDINALITY AS x(v, ord)
  ), ins AS (
    INSERT INTO ${t.outbox} AS ob (id, category, kind, stream, payload, status, attempts, not_before, lease_owner,
      lease_until, result, created_at, updated_at)
    SELECT r.v->>'id', r.v->>'category', r.v->>'kind', r.v->>'stream', r.v->'payload', 'pending',
      (r.v->>'attempts')::integer, (r.v->>'not_before')::bigint, r.v->>'lease_owner', (r.v->>'lease_until')::bigint,
      r.v->'result', (v_c[r.g]->>'now')::bigint, (v_c[r.g]->>'now')::bigint
    FROM rows r ORDER BY r.g, r.ord
    ON CONFLICT (id) DO NOTHING
    RETURNING ob.id, ob.seq, ob.lease_owner)
  SELECT (SELECT count(*) FROM rows), (SELECT count(*) FROM ins),
    (SELECT coalesce(bool_or(ins.lease_owner IS NULL), false) FROM ins),
    (SELECT array_agg(coalesce(p.list, '[]'::jsonb) ORDER BY i) FROM generate_series(1, v_n) AS i
      LEFT JOIN (
        SELECT r.g, jsonb_agg(jsonb_build_array(ins.id, ins.seq) ORDER BY ins.seq) AS list
        FROM ins JOIN (SELECT DISTINCT rows.g, rows.v->>'id' AS id FROM rows) r ON r.id = ins.id GROUP BY r.g
      ) p ON p.g = i)
  INTO v_outbox, v_rows, v_unleased, v_inserted;
  notify := notify OR v_unleased;
  IF v_rows < v_outbox THEN
    -- Some ids were held already. Step 1 compared the rows it could see; a row inserted since by
    -- another transaction with another request is a reuse the fallback answers per commit.
    IF EXISTS (
      SELECT 1 FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'outbox') AS x(v)
      JOIN ${t.outbox} o ON o.id = x.v->>'id'
      WHERE x.v->>'category' = 'effect'
        AND (o.stream <> x.v->>'stream' OR o.kind <> x.v->>'kind' OR ${identity("o.payload")} IS DISTINCT FROM ${identity("(x.v->'payload')")})
    ) THEN
      RAISE EXCEPTION USING ERRCODE = 'OC002', MESSAGE = 'an effect key was taken concurrently';
    END IF;
  END IF;

  -- 5. Rows done. Keys are distinct across the set path; within one commit the first entry wins.
  UPDATE ${t.outbox} o SET status = 'done', outcome = d.v->>'outcome', result = d.v->'result',
    lease_owner = NULL, lease_until = NULL, updated_at = d.now
  FROM (
    SELECT DISTINCT ON (x.v->>'id') x.v, (v_c[g]->>'now')::bigint AS now
    FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'done') WITH ORDINALITY AS x(v, ord)
    ORDER BY x.v->>'id', x.ord
  ) d
  WHERE o.id = d.v->>'id' AND o.status <> 'done';

  FOR i IN 1..cardinality(v_go) LOOP
    v_events := jsonb_array_length(v_c[v_go[i]]->'events');
    results[v_go[i]] := jsonb_build_object('version', v_base[v_go[i]] + v_events,
      'inserted', v_inserted[v_go[i]])::text;
  END LOOP;
END
$oncely$;
${options.withBatchFunction === false ? "" : batchFunctionSql(t)}`;

const batchFunctionSql = (t: Tables): string => `
CREATE OR REPLACE FUNCTION ${t.commitBatchFunction}(p_commits text[], p_channel text) RETURNS text[]
LANGUAGE plpgsql AS $oncely$
DECLARE
  v_results text[];
  v_notify boolean;
  v_rest integer[];
  v_each text[];
BEGIN
  -- One subtransaction for the whole set path: any error in it rolls back all of it, and every
  -- commit of the batch then goes through the per-commit path.
  BEGIN
    SELECT s.results, s.notify INTO v_results, v_notify FROM ${t.commitSetFunction}(p_commits) s;
  EXCEPTION WHEN OTHERS THEN
    v_results := array_fill(NULL::text, ARRAY[coalesce(cardinality(p_commits), 0)]);
    v_notify := false;
  END;
  v_rest := ARRAY(SELECT i FROM generate_subscripts(p_commits, 1) AS i WHERE v_results[i] IS NULL ORDER BY i);
${perCommitRestSql(t, "p_commits[i]")}
  RETURN v_results;
END
$oncely$;
`;

/**
 * The tail both batch functions share: the commits the set path left unanswered (`v_rest`, in
 * batch order) go through `oncely_commit` one subtransaction each, and their answers fill
 * `v_results`; then the set path's NOTIFY, when it inserted an unleased row. `element` is the SQL
 * for commit `i` as `oncely_commit` takes it (text).
 */
export const perCommitRestSql = (t: Tables, element: string): string => `  IF cardinality(v_rest) > 0 THEN
    -- In batch order, after the set path; it sends its own NOTIFY when it inserts an unleased row.
    v_each := ${t.commitFunction}(ARRAY(SELECT ${element} FROM unnest(v_rest) WITH ORDINALITY AS r(i, ord)
      ORDER BY ord), p_channel);
    FOR k IN 1..cardinality(v_rest) LOOP
      v_results[v_rest[k]] := v_each[k];
    END LOOP;
  END IF;
  IF v_notify THEN
    PERFORM pg_notify(p_channel, '');
  END IF;`;
