-- oncely_commit_set_events(commits jsonb[], go integer[], base integer[], snapshots integer): step 4 of
-- the set path, the events and snapshots of the commits it applies, taken out of
-- oncely_commit_set_packed (0009_commit_parts) with its statements unchanged. The set path calls it
-- once per batch that applies some commit, where the statements stood; it opens no subtransaction, so
-- what it raises rolls back the set path's as before (the batch then goes to oncely_commit, which
-- answers each commit). Never called by the client.
--
-- Events go at the versions read in step 2 (`base`, the version before each commit). A writer that
-- appended since raises a unique violation (as does an event id already used): the fallback answers
-- it per commit.
--
-- The SET clause: the set path's, for the same statements (see oncely_commit_set_updates.sql).
CREATE FUNCTION ${schema}.oncely_commit_set_events(
  p_c jsonb[], p_go integer[], p_base integer[], p_snapshots integer
) RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET plan_cache_mode = force_generic_plan
AS $oncely$
BEGIN
  INSERT INTO ${schema}.events
    (stream, version, event_id, type, data, causation_id, correlation_id, recorded_at, schema_version)
  SELECT p_c[g]->>'stream', p_base[g] + x.ord, x.v->>0, x.v->>1,
    x.v->2, x.v->>3, x.v->>4,
    (p_c[g]->>'now')::bigint, (x.v->>5)::integer
  FROM unnest(p_go) AS g, jsonb_array_elements(p_c[g]->'events') WITH ORDINALITY AS x(v, ord)
  ORDER BY g, x.ord;

  -- Only when some commit has one (counted in step 2; duplicates removed in step 3 can only make it
  -- fewer): a statement costs its executor start even when it selects nothing.
  IF p_snapshots > 0 THEN
    INSERT INTO ${schema}.snapshots AS s (stream, version, schema_version, state, taken_at)
    SELECT p_c[g]->>'stream', (p_c[g]#>>'{snapshot,version}')::integer, (p_c[g]#>>'{snapshot,schema_version}')::integer,
      p_c[g]#>'{snapshot,state}', (p_c[g]->>'now')::bigint
    FROM unnest(p_go) AS g WHERE p_c[g]->'snapshot' IS NOT NULL
    ON CONFLICT (stream) DO UPDATE SET version = excluded.version, schema_version = excluded.schema_version,
      state = excluded.state, taken_at = excluded.taken_at;
  END IF;
END
$oncely$;
