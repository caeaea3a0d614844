import { identity } from "./commit-function.js";
import { KEY_LOOKUP_PLANS } from "./key-lookup-plans.js";
import { objectRowFields, packedRowFields } from "./packed-rows.js";
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
 *  - duplicate message id: the inbox rows are inserted first, ON CONFLICT DO NOTHING, and a commit
 *    whose row was not inserted is a duplicate (nothing else of it is written). Since migration 10
 *    a final outcome naming its row (InboxEntry.outcomeOf) writes no inbox row and reads nothing
 *    first: the set path assumes its consumer holds the row and the row is not done (the common
 *    case, by far), and the done update checks it, row by row. A row found done (a duplicate),
 *    absent (pruned) or not held by the consumer fails the assumption, and the whole batch takes
 *    the fallback, which answers each commit exactly (a duplicate, or the inbox row). Measured
 *    against reading each row's status in the guards' scan instead: 2.5-3% less server CPU per
 *    batch, the same statements replayed into both schemas alternately.
 * An effect key already held with another request (a reuse) is not looked for before the writes:
 * its row's insert does nothing, the check after the outbox insert finds the held row differs, and
 * the batch takes the fallback below, where that commit fails alone. Reuse is an error and rare, and
 * probing every key of every batch for it cost about a twelfth of the server's CPU per batch
 * (migration 12: `npm run bench -- replay --orders 4000`, eight pairs alternating, 1.31 ms mean
 * against 1.42, lower in all eight).
 * What the guards cannot see either is another transaction racing on the same keys (an append to
 * the same stream, an event id already used): the insert then raises or the check after it fails,
 * the whole set path rolls back (its one subtransaction), and `oncely_commit` applies the entire
 * batch one commit at a time, as before, where each such race is answered per commit. Any other
 * error in the set path (a value the server refuses, e.g. a NUL byte in JSON text) takes the same
 * fallback, so the set path never decides a commit's fate differently from the per-commit path.
 *
 * Migration 9 re-creates it (and every older migration now creates this text) with the same
 * answers in fewer passes: the guards in ONE scan of the batch instead of a CTE re-read once per
 * commit; which inbox rows were duplicates looked for only when fewer rows were inserted than
 * asked; the inserted outbox ids' seqs as one jsonb object instead of a join per commit; every
 * answer built by one statement instead of a loop; statements for parts no commit has skipped.
 * Measured with `npm run bench -- replay --orders 4000` (the workflow's commit statements replayed
 * on one connection), three runs each, before and after alternating: server CPU per 50-commit
 * batch 3.02–3.08 ms before, 2.69–2.77 ms after; wall per batch (mean) 3.35–3.54 ms, 3.05–3.13 ms.
 */
/** Step 1 computed by the server, for a client that does not name the commits sharing a key (object format only). */
const LATER_SQL = `  v_later := ARRAY(
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
`;

/** Step 7: each applied commit's whole answer, its version and the outbox rows it inserted with their seq. */
const ANSWERS_SQL = `  results := ARRAY(
    SELECT CASE WHEN results[i] IS NULL AND v_base[i] IS NOT NULL
      THEN '{"version": ' || (v_base[i] + jsonb_array_length(v_c[i]->'events')) || ', "inserted": ' || coalesce((
        SELECT jsonb_agg(jsonb_build_array(d.id, v_seqs->d.id) ORDER BY (v_seqs->>d.id)::bigint)
        FROM (SELECT DISTINCT x.v->>'id' AS id FROM jsonb_array_elements(v_c[i]->'outbox') AS x(v)) d
        WHERE v_seqs ? d.id), '[]') || '}'
      ELSE results[i] END
    FROM generate_series(1, v_n) AS i ORDER BY i);
`;

/**
 * Step 7, keyed: each applied commit's base version only, and the inserted rows' seqs once for the
 * batch; the client, which knows each commit's events and outbox rows, builds the answers.
 */
const KEYED_ANSWERS_SQL = `  results := ARRAY(
    SELECT CASE WHEN results[i] IS NULL AND v_base[i] IS NOT NULL THEN '{"base": ' || v_base[i] || '}' ELSE results[i] END
    FROM generate_series(1, v_n) AS i ORDER BY i);
  seqs := v_seqs;
`;

export const commitSetFunctionSql = (
  t: Tables,
  options: {
    keyLookups?: boolean;
    input?: "text" | "jsonb";
    withBatchFunction?: boolean;
    keyed?: boolean;
    /** Migration 11: rows read by position (packed-rows.ts); keyed, under its own name. */
    packed?: boolean;
  } = {},
): string => {
  const r = options.packed ? packedRowFields : objectRowFields;
  const keyed = options.keyed === true || options.packed === true;
  const keyedName = options.packed ? t.commitSetPackedFunction : t.commitSetKeyedFunction;
  return `
CREATE OR REPLACE FUNCTION ${
    keyed
      ? `${keyedName}(p_commits jsonb[], p_later integer[], OUT results text[], OUT notify boolean, OUT seqs jsonb)`
      : `${t.commitSetFunction}(p_commits ${options.input ?? "text"}[], OUT results text[], OUT notify boolean)`
  }
LANGUAGE plpgsql ${options.keyLookups ? KEY_LOOKUP_PLANS : ""} AS $oncely$
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
  notify := false;${keyed ? "\n  seqs := '{}';" : ""}
  IF v_n = 0 THEN RETURN; END IF;
  -- Parsed once for every statement below; a commit the server cannot parse raises (fallback).
  v_c := p_commits${options.input === "jsonb" ? "" : "::jsonb[]"};

  -- 1. Commits sharing a key (stream, inbox key, outbox id) with an EARLIER commit of the batch:
  --    left to the per-commit path, which runs them after the set path, in batch order.
  ${keyed ? "-- Named by the client (see commit-json-function.ts).\n  v_later := coalesce(p_later, '{}');\n" : LATER_SQL}
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
        CASE WHEN c.taken THEN (SELECT coalesce(max(e.version), 0) FROM ${t.events} e WHERE e.stream = c.j->>'stream') END AS cur
      FROM (
        SELECT u.ord::integer AS ord, u.j, u.j ? 'update' AS is_update, u.ord = ANY (v_later) AS is_later,
          coalesce(NOT u.j ? 'update' AND u.j->>'stream' IS NOT NULL AND u.j->'checkpoint' IS NULL
            AND ${r.rareLength("u.j", "park")} = 0 AND ${r.rareLength("u.j", "unpark")} = 0
            AND ${r.rareLength("u.j", "dead")} = 0 AND ${r.rareLength("u.j", "docs")} = 0
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

  -- 3. The inbox rows first: a commit whose row is already there is a duplicate, and nothing else
  --    of it is written. (A concurrent inserter of the key is waited for, then seen as present.)
  --    Which rows were not inserted is looked for only when fewer were inserted than asked.
  IF v_inboxes > 0 THEN
    WITH ins AS (
      INSERT INTO ${t.inbox} (consumer, message_id, reply, recorded_at)
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
  INSERT INTO ${t.events}
    (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
  SELECT v_c[g]->>'stream', v_base[g] + x.ord, x.v->>${r.event("event_id")}, x.v->>${r.event("type")},
    x.v->${r.event("data")}, x.v->>${r.event("causation_id")}, x.v->>${r.event("correlation_id")},
    (v_c[g]->>'now')::bigint, (x.v->>${r.event("schema_version")})::integer
  FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'events') WITH ORDINALITY AS x(v, ord)
  ORDER BY g, x.ord;

  -- Only when some commit has one (counted in 2; duplicates removed in 3 can only make it fewer):
  -- a statement costs its executor start even when it selects nothing (migration 12).
  IF v_snapshots > 0 THEN
    INSERT INTO ${t.snapshots} AS s (stream, version, schema_version, state, taken_at)
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
      INSERT INTO ${t.outbox} AS ob (id, category, kind, stream, payload, status, attempts, not_before, lease_owner,
        lease_until, result, created_at, updated_at)
      SELECT x.v->>${r.outbox("id")}, x.v->>${r.outbox("category")}, x.v->>${r.outbox("kind")},
        x.v->>${r.outbox("stream")}, x.v->${r.outbox("payload")}, 'pending', (x.v->>${r.outbox("attempts")})::integer,
        (x.v->>${r.outbox("not_before")})::bigint, x.v->>${r.outbox("lease_owner")},
        (x.v->>${r.outbox("lease_until")})::bigint, x.v->${r.outbox("result")}, (v_c[g]->>'now')::bigint,
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
        JOIN ${t.outbox} o ON o.id = x.v->>${r.outbox("id")}
        WHERE x.v->>${r.outbox("category")} = 'effect'
          AND (o.stream <> x.v->>${r.outbox("stream")} OR o.kind <> x.v->>${r.outbox("kind")}
            OR ${identity("o.payload")} IS DISTINCT FROM ${identity(`(x.v->${r.outbox("payload")})`)})
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
      UPDATE ${t.outbox} o SET status = 'done', outcome = d.v->>${r.done("outcome")}, result = d.v->${r.done("result")},
        lease_owner = NULL, lease_until = NULL, updated_at = d.now
      FROM (
        SELECT DISTINCT ON (x.v->>${r.done("id")}) x.v, (v_c[g]->>'now')::bigint AS now,
          v_byrow[g] AND x.v->>${r.done("id")} = v_c[g]#>>'{inbox,outcome_of}' AS by_row,
          v_c[g]#>>'{inbox,consumer}' AS consumer
        FROM unnest(v_go) AS g, jsonb_array_elements(v_c[g]->'done') WITH ORDINALITY AS x(v, ord)
        ORDER BY x.v->>${r.done("id")}, x.ord
      ) d
      WHERE o.id = d.v->>${r.done("id")} AND o.status <> 'done'
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
  ${keyed ? KEYED_ANSWERS_SQL : ANSWERS_SQL}
END
$oncely$;
${options.withBatchFunction === false ? "" : batchFunctionSql(t)}`;
};

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
