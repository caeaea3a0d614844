-- oncely_commit_set_done(commits jsonb[], go integer[], byrow boolean[], byrows integer): step 6 of the
-- set path, the outbox rows done by the commits it applies, taken out of oncely_commit_set_packed
-- (0009_commit_parts) with its statements unchanged. The set path calls it once per batch that has rows
-- done, where the statements stood; it opens no subtransaction, so what it raises rolls back the set
-- path's as before (the batch then goes to oncely_commit, which answers each commit exactly). Never
-- called by the client.
--
-- Keys are distinct across the set path; within one commit the first entry wins. A final outcome
-- recorded by its row (`byrow`; `byrows` of them) must find the row held by its consumer and still not
-- done: a duplicate (the row done, maybe by a transaction racing this one), a row pruned or another's
-- raises OC002.
--
-- The SET clause: the set path's, for the same statements (see oncely_commit_set_updates.sql).
CREATE FUNCTION ${schema}.oncely_commit_set_done(
  p_c jsonb[], p_go integer[], p_byrow boolean[], p_byrows integer
) RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_rows integer;
BEGIN
  WITH upd AS (
    UPDATE ${schema}.outbox o SET status = 'done', outcome = d.v->>1, result = d.v->2,
      lease_owner = NULL, lease_until = NULL, updated_at = d.now
    FROM (
      SELECT DISTINCT ON (x.v->>0) x.v, (p_c[g]->>'now')::bigint AS now,
        p_byrow[g] AND x.v->>0 = p_c[g]#>>'{inbox,outcome_of}' AS by_row,
        p_c[g]#>>'{inbox,consumer}' AS consumer
      FROM unnest(p_go) AS g, jsonb_array_elements(p_c[g]->'done') WITH ORDINALITY AS x(v, ord)
      ORDER BY x.v->>0, x.ord
    ) d
    WHERE o.id = d.v->>0 AND o.status <> 'done'
      AND (NOT d.by_row OR (o.stream = d.consumer AND o.category <> 'event'))
    RETURNING d.by_row)
  SELECT count(*) FILTER (WHERE upd.by_row) INTO v_rows FROM upd;
  IF v_rows < p_byrows THEN
    RAISE EXCEPTION USING ERRCODE = 'OC002', MESSAGE = 'an outcome''s row was not open and held by its consumer';
  END IF;
END
$oncely$;
