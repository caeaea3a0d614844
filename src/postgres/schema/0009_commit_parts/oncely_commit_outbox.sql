-- oncely_commit_outbox(commit jsonb, now bigint) -> (inserted, unleased): the outbox rows of one
-- commit of the per-commit path and the effect-key reuse check after them, taken out of oncely_commit
-- (0009_commit_parts) with their statements unchanged. oncely_commit calls it once for a commit that
-- has outbox rows, inside that commit's BEGIN ... EXCEPTION block: the function opens no
-- subtransaction of its own, so its rows and the locks ON CONFLICT waits on belong to the commit's,
-- and what it raises (OC001, or any other error) is caught there as if raised in oncely_commit.
-- Never called by the client.
--
-- Out: `inserted`, the inserted rows as [[id, seq]...] in seq order, and `unleased`, how many of them
-- were inserted without a lease (not handed over), for oncely_commit's NOTIFY.
--
-- VOLATILE (the default) on purpose: each statement takes a fresh snapshot, which the reuse check
-- relies on (below). The SET clause: oncely_commit's, for the same statements (see
-- oncely_commit_checkpoints.sql).
CREATE FUNCTION ${schema}.oncely_commit_outbox(c jsonb, p_now bigint, OUT inserted jsonb, OUT unleased bigint)
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_reused jsonb;
BEGIN
  -- ORDER BY ord: seq is drawn in that order, so rows of one commit keep the caller's order.
  WITH ins AS (
    INSERT INTO ${schema}.outbox AS ob (id, category, kind, stream, payload, status, attempts, not_before,
      lease_owner, lease_until, result, created_at, updated_at, slice)
    SELECT x.v->>'id', x.v->>'category', x.v->>'kind', x.v->>'stream', x.v->'payload', 'pending',
      (x.v->>'attempts')::integer, (x.v->>'not_before')::bigint, x.v->>'lease_owner',
      (x.v->>'lease_until')::bigint, x.v->'result', p_now, p_now, (x.v->>'slice')::integer
    FROM jsonb_array_elements(c->'outbox') WITH ORDINALITY AS x(v, ord)
    ORDER BY x.ord
    ON CONFLICT (id) DO NOTHING
    RETURNING ob.id, ob.seq, ob.lease_owner)
  SELECT coalesce(jsonb_agg(jsonb_build_array(ins.id, ins.seq) ORDER BY ins.seq), '[]'::jsonb),
    count(*) FILTER (WHERE ins.lease_owner IS NULL)
  INTO inserted, unleased FROM ins;
  -- An effect row not inserted because its key is held must be the same request (stream, kind,
  -- payload without its trace; jsonb equality ignores key order), else the commit fails with
  -- {"reused": id, "held": {...}}. Checked AFTER the insert: ON CONFLICT waited for a concurrent
  -- inserter of the key, and this statement's fresh snapshot sees its row.
  SELECT jsonb_build_object('reused', o.id, 'held', jsonb_build_object('stream', o.stream, 'kind', o.kind,
    'payload', o.payload)) INTO v_reused
  FROM jsonb_array_elements(c->'outbox') AS x(v) JOIN ${schema}.outbox o ON o.id = x.v->>'id'
  WHERE x.v->>'category' = 'effect' AND NOT (inserted @> jsonb_build_array(jsonb_build_array(o.id)))
    AND (o.stream <> x.v->>'stream' OR o.kind <> x.v->>'kind'
      OR (CASE WHEN jsonb_typeof(o.payload) = 'object' THEN o.payload - 'trace' ELSE o.payload END)
        IS DISTINCT FROM (CASE WHEN jsonb_typeof((x.v->'payload')) = 'object' THEN (x.v->'payload') - 'trace'
          ELSE (x.v->'payload') END))
  LIMIT 1;
  IF v_reused IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'OC001', MESSAGE = v_reused::text;
  END IF;
END
$oncely$;
