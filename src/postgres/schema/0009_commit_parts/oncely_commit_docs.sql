-- oncely_commit_docs(commit jsonb, now bigint): one commit's read-model documents, upserted or
-- deleted in the commit's order (a commit may upsert and then delete the same document), taken out of
-- oncely_commit (0009_commit_parts) with its statements unchanged. oncely_commit calls it once for a
-- commit that has documents, inside that commit's BEGIN ... EXCEPTION block: the function opens no
-- subtransaction of its own, so what it writes belongs to the commit's, and what it raises is caught
-- there as if raised in oncely_commit. Never called by the client.
--
-- The SET clause: oncely_commit's, for the same statements (see oncely_commit_checkpoints.sql).
CREATE FUNCTION ${schema}.oncely_commit_docs(c jsonb, p_now bigint) RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_doc jsonb;
BEGIN
  FOR v_doc IN SELECT x.v FROM jsonb_array_elements(c->'docs') WITH ORDINALITY AS x(v, ord) ORDER BY x.ord LOOP
    IF (v_doc->>'delete')::boolean THEN
      DELETE FROM ${schema}.documents WHERE collection = v_doc->>'collection' AND id = v_doc->>'id';
    ELSE
      INSERT INTO ${schema}.documents (collection, id, doc, updated_at)
      VALUES (v_doc->>'collection', v_doc->>'id', v_doc->'doc', p_now)
      ON CONFLICT (collection, id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at;
    END IF;
  END LOOP;
END
$oncely$;
