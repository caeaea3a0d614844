-- oncely_commit_checkpoints(commit jsonb, now bigint): the checkpoint guards of one commit of the
-- per-commit path, taken out of oncely_commit (0009_commit_parts) with their statements unchanged.
-- oncely_commit calls it once for a commit that has checkpoints, inside that commit's BEGIN ...
-- EXCEPTION block: the function opens no subtransaction of its own, so what it writes and locks
-- belongs to the commit's, and what it raises (OC001, or any other error) is caught there as if
-- raised in oncely_commit itself. Never called by the client.
--
-- Each guard in turn: no `expected`, the checkpoint is set; `expected` 0, it is created (or moved
-- from 0); otherwise it moves only from `expected`. One not moved refuses the commit (its
-- subtransaction undoes the others): OC001 {"checkpoint": actual, "at": its index}.
--
-- The SET clause: oncely_commit's, for the same statements (see oncely_commit_set_packed.sql:
-- key lookups planned as index probes, one generic plan). Called from oncely_commit it changes
-- nothing, as the caller's settings hold already; it keeps this function's plans what they were
-- measured to be when it is called on its own (a test, a psql session).
CREATE FUNCTION ${schema}.oncely_commit_checkpoints(c jsonb, p_now bigint) RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_cp jsonb;
  v_i integer;
  v_moved integer;
  v_actual integer;
BEGIN
  FOR v_i IN 0 .. coalesce(jsonb_array_length(c->'checkpoints'), 0) - 1 LOOP
    v_cp := c->'checkpoints'->v_i;
    v_moved := 1;
    IF v_cp->'expected' IS NULL THEN
      INSERT INTO ${schema}.checkpoints (consumer, source, version, updated_at)
      VALUES (v_cp->>'consumer', v_cp->>'source', (v_cp->>'version')::integer, p_now)
      ON CONFLICT (consumer, source) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at;
    ELSIF (v_cp->>'expected')::integer = 0 THEN
      INSERT INTO ${schema}.checkpoints AS cp (consumer, source, version, updated_at)
      VALUES (v_cp->>'consumer', v_cp->>'source', (v_cp->>'version')::integer, p_now)
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
      UPDATE ${schema}.checkpoints SET version = (v_cp->>'version')::integer, updated_at = p_now
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
END
$oncely$;
