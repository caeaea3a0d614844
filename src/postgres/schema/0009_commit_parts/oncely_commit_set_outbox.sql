-- oncely_commit_set_outbox(commits jsonb[], go integer[], outboxes integer) -> (seqs, unleased): step 5
-- of the set path, the outbox rows of the commits it applies and the effect-key check after them, taken
-- out of oncely_commit_set_packed (0009_commit_parts) with its statements unchanged. The set path calls
-- it once per batch that has outbox rows, where the statements stood; it opens no subtransaction, so
-- what it raises rolls back the set path's as before (the batch then goes to oncely_commit, which
-- answers each commit). Never called by the client.
--
-- Rows are inserted with seq drawn in batch order then row order; an id already held is not inserted.
-- Out: each inserted id's seq, as one jsonb object (outbox ids are distinct across the set path, so an
-- inserted id belongs to the one commit that lists it), and whether some row was inserted unleased
-- (not handed over), for the set path's NOTIFY. VOLATILE (the default) on purpose: the check's
-- statement takes a fresh snapshot, which sees a row a concurrent inserter committed meanwhile.
--
-- The SET clause: the set path's, for the same statements (see oncely_commit_set_updates.sql).
CREATE FUNCTION ${schema}.oncely_commit_set_outbox(
  p_c jsonb[], p_go integer[], p_outboxes integer, OUT seqs jsonb, OUT unleased boolean
)
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
DECLARE
  v_rows integer;
BEGIN
  WITH ins AS (
    INSERT INTO ${schema}.outbox AS ob (id, category, kind, stream, payload, status, attempts, not_before, lease_owner,
      lease_until, result, created_at, updated_at, slice)
    SELECT x.v->>0, x.v->>1, x.v->>2,
      x.v->>3, x.v->4, 'pending', (x.v->>8)::integer,
      (x.v->>5)::bigint, x.v->>6,
      (x.v->>7)::bigint, x.v->9, (p_c[g]->>'now')::bigint,
      (p_c[g]->>'now')::bigint, (x.v->>10)::integer
    FROM unnest(p_go) AS g, jsonb_array_elements(p_c[g]->'outbox') WITH ORDINALITY AS x(v, ord)
    ORDER BY g, x.ord
    ON CONFLICT (id) DO NOTHING
    RETURNING ob.id, ob.seq, ob.lease_owner)
  SELECT count(*), coalesce(jsonb_object_agg(ins.id, ins.seq), '{}'), coalesce(bool_or(ins.lease_owner IS NULL), false)
  INTO v_rows, seqs, unleased FROM ins;
  IF v_rows < p_outboxes THEN
    -- Some ids were held already: by the same request (a key asked for again, no error), or by
    -- another one (a reuse, held before the batch or inserted concurrently), which the fallback
    -- answers per commit.
    IF EXISTS (
      SELECT 1 FROM unnest(p_go) AS g, jsonb_array_elements(p_c[g]->'outbox') AS x(v)
      JOIN ${schema}.outbox o ON o.id = x.v->>0
      WHERE x.v->>1 = 'effect'
        AND (o.stream <> x.v->>3 OR o.kind <> x.v->>2
          -- A payload's identity leaves out its trace (the requesting command's trace context).
          OR (CASE WHEN jsonb_typeof(o.payload) = 'object' THEN o.payload - 'trace' ELSE o.payload END)
            IS DISTINCT FROM (CASE WHEN jsonb_typeof((x.v->4)) = 'object' THEN (x.v->4) - 'trace' ELSE (x.v->4) END))
    ) THEN
      RAISE EXCEPTION USING ERRCODE = 'OC002', MESSAGE = 'an effect key is held with another request';
    END IF;
  END IF;
END
$oncely$;
