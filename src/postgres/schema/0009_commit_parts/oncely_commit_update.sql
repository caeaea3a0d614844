-- oncely_commit_update(update jsonb) -> status: one lease-held outbox update of the per-commit path
-- (a dispatcher recording an attempt, batched like a commit; see outbox.ts), taken out of
-- oncely_commit (0009_commit_parts) with its statement unchanged. oncely_commit calls it once for an
-- item {"update": ...}, inside that item's BEGIN ... EXCEPTION block (an error is that item's answer,
-- as before), and answers {"status": the row's new status}, or null when the lease was not held or
-- the row is done (nothing updated). Never called by the client.
--
-- The SET clause: oncely_commit's, for the same statement (see oncely_commit_checkpoints.sql).
CREATE FUNCTION ${schema}.oncely_commit_update(p_u jsonb) RETURNS text
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_status text;
BEGIN
  UPDATE ${schema}.outbox SET
    status = coalesce(p_u->>'status', status),
    attempts = coalesce((p_u->>'attempts')::integer, attempts),
    not_before = coalesce((p_u->>'not_before')::bigint, not_before),
    last_error = CASE WHEN p_u ? 'last_error' THEN p_u->>'last_error' ELSE last_error END,
    outcome = CASE WHEN p_u ? 'outcome' THEN p_u->>'outcome' ELSE outcome END,
    result = CASE WHEN p_u ? 'result' THEN p_u->'result' ELSE result END,
    lease_owner = CASE WHEN (p_u->>'release')::boolean THEN NULL ELSE lease_owner END,
    lease_until = CASE WHEN (p_u->>'release')::boolean THEN NULL ELSE lease_until END,
    updated_at = (p_u->>'now')::bigint
  WHERE id = p_u->>'id' AND (p_u->>'owner' IS NULL OR lease_owner = p_u->>'owner') AND status <> 'done'
  RETURNING status INTO v_status;
  RETURN v_status;
END
$oncely$;
