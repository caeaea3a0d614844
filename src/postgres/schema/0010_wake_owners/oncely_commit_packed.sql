-- Migration 0010: oncely_commit_packed as in 0001_baseline, with one more argument, `wake`, the payload
-- of its NOTIFY (see 0010_wake_owners/oncely_commit.sql), passed on to oncely_commit for the commits
-- its set path leaves. `wake` defaults to '' for a client of the previous release (wakes everyone).
--
-- oncely_commit_packed(commits text, later integer[], channel text, wake text) -> text: group commit,
-- what the client calls for a batch of more than one commit. In, out, the set path and the per-commit
-- path: see 0001_baseline/oncely_commit_packed.sql, which this repeats statement for statement.
DROP FUNCTION ${schema}.oncely_commit_packed(text, integer[], text);
CREATE FUNCTION ${schema}.oncely_commit_packed(p_commits text, p_later integer[], p_channel text, p_wake text DEFAULT '')
RETURNS text
LANGUAGE plpgsql AS $oncely$
DECLARE
  v_c jsonb[];
  v_texts text[];
  v_n integer;
  v_results text[];
  v_notify boolean := false;
  v_rest integer[];
  v_each text[];
  v_seqs jsonb := '{}';
  v_x json;
BEGIN
  -- One subtransaction for the parse and the whole set path: an error in either rolls all of it
  -- back (variables keep what was assigned), and the commits left unanswered go one at a time.
  BEGIN
    v_c := ARRAY(SELECT e FROM jsonb_array_elements(p_commits::jsonb) AS e);
    IF cardinality(v_c) > 1 THEN
      SELECT s.results, s.notify, s.seqs INTO v_results, v_notify, v_seqs FROM ${schema}.oncely_commit_set_packed(v_c, p_later) s;
    END IF;
  EXCEPTION WHEN OTHERS THEN
    v_results := NULL;
    v_notify := false;
    v_seqs := '{}';
  END;
  IF v_c IS NULL THEN
    -- Each commit that jsonb can hold, unpacked for the per-commit path; the one it cannot, as
    -- sent: the per-commit path fails it alone, with the server's own error.
    v_texts := ARRAY[]::text[];
    FOR v_x IN SELECT x FROM json_array_elements(p_commits::json) AS x LOOP
      BEGIN
        v_texts := v_texts || ${schema}.oncely_unpack(v_x::jsonb)::text;
      EXCEPTION WHEN OTHERS THEN
        v_texts := v_texts || v_x::text;
      END;
    END LOOP;
  END IF;
  v_n := coalesce(cardinality(v_c), cardinality(v_texts), 0);
  IF v_results IS NULL THEN
    v_results := array_fill(NULL::text, ARRAY[v_n]);
  END IF;
  -- Which commits the set path left unanswered, looked for only when there are some.
  IF array_position(v_results, NULL) IS NULL THEN
    v_rest := '{}';
  ELSE
    v_rest := ARRAY(SELECT i FROM generate_series(1, v_n) AS i WHERE v_results[i] IS NULL ORDER BY i);
  END IF;
  IF cardinality(v_rest) > 0 THEN
    -- In batch order, after the set path; it sends its own NOTIFY when it inserts an unleased row.
    v_each := ${schema}.oncely_commit(ARRAY(SELECT coalesce(v_texts[i], ${schema}.oncely_unpack(v_c[i])::text) FROM unnest(v_rest) WITH ORDINALITY AS r(i, ord)
      ORDER BY ord), p_channel, p_wake);
    FOR k IN 1..cardinality(v_rest) LOOP
      v_results[v_rest[k]] := v_each[k];
    END LOOP;
  END IF;
  IF v_notify THEN
    PERFORM pg_notify(p_channel, p_wake);
  END IF;
  RETURN '{"results": [' || array_to_string(v_results, ',', 'null') || '], "seqs": ' || v_seqs::text || '}';
END
$oncely$;
