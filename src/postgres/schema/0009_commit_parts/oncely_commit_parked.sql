-- oncely_commit_parked(commit jsonb, now bigint): one commit's parked messages (parked, unparked) and
-- dead letters, taken out of oncely_commit (0009_commit_parts) with their statements unchanged.
-- oncely_commit calls it once for a commit that has any of them, inside that commit's BEGIN ...
-- EXCEPTION block: the function opens no subtransaction of its own, so what it writes belongs to the
-- commit's, and what it raises is caught there as if raised in oncely_commit. Never called by the
-- client. Each statement runs only when the commit has its rows: an empty statement still costs its
-- execution.
--
-- The SET clause: oncely_commit's, for the same statements (see oncely_commit_checkpoints.sql).
CREATE FUNCTION ${schema}.oncely_commit_parked(c jsonb, p_now bigint) RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
BEGIN
  IF jsonb_array_length(c->'park') > 0 THEN
    INSERT INTO ${schema}.parked (consumer, source, version, message, parked_at)
    SELECT x.v->>'consumer', x.v->>'source', (x.v->>'version')::integer, x.v->'message', p_now
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
END
$oncely$;
