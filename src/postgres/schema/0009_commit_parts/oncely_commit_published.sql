-- oncely_commit_published(commit jsonb, now bigint) -> appended: one commit's `published` entries
-- appended to the published log (0008_published_at_commit), taken out of oncely_commit
-- (0009_commit_parts) with its statements unchanged. oncely_commit calls it once for a commit that has
-- entries, last in that commit's BEGIN ... EXCEPTION block (after every check that may refuse the
-- commit). The function opens no subtransaction of its own: the advisory lock it takes belongs to
-- the commit's subtransaction, held to the call's COMMIT, or released with it when it is rolled back.
-- Answers whether some entry was appended (a message id already in the log is stored once), for
-- oncely_commit's one NOTIFY on the published channel. Never called by the client.
--
-- Entries are appended as oncely_publish appends them: under the published log's advisory lock (see
-- there why: positions become visible in position order). The SET clause: oncely_commit's, for the
-- same statements (see oncely_commit_checkpoints.sql).
CREATE FUNCTION ${schema}.oncely_commit_published(c jsonb, p_now bigint) RETURNS boolean
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_appended boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(${published_lock}, 0));
  -- ORDER BY ord: positions are drawn in that order, so entries of one commit keep the caller's order.
  WITH ins AS (
    INSERT INTO ${schema}.published (message_id, subject, body, published_at, slice)
    SELECT x.v->>'message_id', x.v->>'subject', x.v->>'body', p_now, (x.v->>'slice')::integer
    FROM jsonb_array_elements(c->'published') WITH ORDINALITY AS x(v, ord)
    ORDER BY x.ord
    ON CONFLICT (message_id) DO NOTHING
    RETURNING 1)
  SELECT count(*) > 0 INTO v_appended FROM ins;
  RETURN v_appended;
END
$oncely$;
