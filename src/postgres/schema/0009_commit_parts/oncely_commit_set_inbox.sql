-- oncely_commit_set_inbox(commits jsonb[], go integer[], byrow boolean[], inboxes integer) -> dup
-- integer[]: step 3 of the set path, the inbox rows of the commits it applies, inserted before anything
-- else of them, taken out of oncely_commit_set_packed (0009_commit_parts) with its statements unchanged.
-- The set path calls it once per batch that has inbox rows to insert, where the statements stood; it
-- opens no subtransaction, so an error rolls back the set path's as before (the batch then goes to
-- oncely_commit). Never called by the client.
--
-- In: the batch, the positions it applies (`go`), which of them record a final outcome by its row
-- (`byrow`: no inbox row), and how many inbox rows that makes. Out: null when every row was inserted;
-- otherwise the positions, in order, whose row was already there (duplicates: nothing else of them is
-- written). A concurrent inserter of a key is waited for, then seen as present. Which rows were not
-- inserted is looked for only when fewer were inserted than asked.
--
-- The SET clause: the set path's, for the same statements (see oncely_commit_set_updates.sql).
CREATE FUNCTION ${schema}.oncely_commit_set_inbox(
  p_c jsonb[], p_go integer[], p_byrow boolean[], p_inboxes integer
) RETURNS integer[]
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_rows integer;
  v_keys_c text[];
  v_keys_m text[];
BEGIN
  WITH ins AS (
    INSERT INTO ${schema}.inbox (consumer, message_id, reply, recorded_at)
    SELECT p_c[g]#>>'{inbox,consumer}', p_c[g]#>>'{inbox,message_id}', p_c[g]#>'{inbox,reply}',
      (p_c[g]->>'now')::bigint
    FROM unnest(p_go) AS g WHERE p_c[g]->'inbox' IS NOT NULL AND NOT p_byrow[g]
    ORDER BY g
    ON CONFLICT DO NOTHING
    RETURNING consumer, message_id)
  SELECT count(*), array_agg(ins.consumer), array_agg(ins.message_id) INTO v_rows, v_keys_c, v_keys_m FROM ins;
  IF v_rows >= p_inboxes THEN RETURN NULL; END IF;
  RETURN ARRAY(SELECT g FROM unnest(p_go) AS g WHERE p_c[g]->'inbox' IS NOT NULL AND NOT p_byrow[g] AND NOT EXISTS (
    SELECT 1 FROM unnest(v_keys_c, v_keys_m) AS k(consumer, message_id)
    WHERE k.consumer = p_c[g]#>>'{inbox,consumer}' AND k.message_id = p_c[g]#>>'{inbox,message_id}') ORDER BY g);
END
$oncely$;
