-- oncely_commit_set_updates(commits jsonb[], updates integer[]) -> (results, notify): the lease-held
-- outbox updates of a set-path batch (a dispatcher recording an attempt), one statement for all, taken
-- out of oncely_commit_set_packed (0009_commit_parts) with its statement unchanged. The set path calls
-- it once per batch that has some, where the statement stood; it opens no subtransaction, so an error
-- rolls back the set path's as before (the batch then goes to oncely_commit). Never called by the client.
--
-- In: the batch and the positions (1-based) of its updates. Out: each update's answer, in the order of
-- `updates`: {"status": the row's new status}, or null when the lease was not held (or the row is
-- done); and whether one of them asks for a NOTIFY (a status still to be worked on, or `force`).
--
-- The SET clause: the set path's, for the same statement (see oncely_commit_set_packed.sql). Called
-- from there it changes nothing, as the caller's settings hold already; it keeps this function's plan
-- what it was measured to be when it is called on its own (a test, a psql session).
CREATE FUNCTION ${schema}.oncely_commit_set_updates(
  p_c jsonb[], p_upd integer[], OUT results text[], OUT notify boolean
)
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
BEGIN
  WITH u AS (
    SELECT g, p_c[g]->'update' AS v FROM unnest(p_upd) AS g
  ), upd AS (
    UPDATE ${schema}.outbox o SET
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
  INTO results, notify
  FROM unnest(p_upd) AS x(g) LEFT JOIN upd ON upd.g = x.g;
END
$oncely$;
