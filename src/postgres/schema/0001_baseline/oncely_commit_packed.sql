-- oncely_commit_packed(commits text, later integer[], channel text) -> text: group commit, what the
-- client calls for a batch of more than one commit (commit-batch.ts). One call is one statement, one
-- round trip and, outside an explicit transaction, one COMMIT and WAL flush for the whole batch.
--
-- In: the batch as ONE JSON text, `[commit, commit, ...]`, each commit in the packed format (see
-- oncely_unpack), and `later`, the positions (1-based) of the commits sharing a key (stream, inbox
-- key, outbox id) with an earlier one, which the client knows already (writeKeys).
-- Out: ONE JSON text, `{"results": [...], "seqs": {id: seq}}`: a commit the set path applied is
-- answered `{"base": version before it}`, with the inserted outbox rows' seqs once for the batch, from
-- which the client builds its answer; any other commit is answered exactly as oncely_commit answers it.
-- Why JSON text: as a `text[]` parameter every commit had to be escaped into an array literal by the
-- client and the answer parsed back out of one, a sixth of every byte the client allocated.
--
-- Each commit keeps its own fate. The set path (oncely_commit_set_packed) runs in one subtransaction;
-- when it raises, every commit it did not answer goes through oncely_commit, one subtransaction each,
-- in batch order. When the batch cannot be held as jsonb at all (a NUL byte, \u0000, in some commit:
-- json accepts it, jsonb does not), it is split as json instead, which keeps each commit's text as
-- sent, and every commit goes through oncely_commit, where only the one holding the NUL byte fails.
-- A lone commit skips the set path: its fixed cost (a statement per table) is more than one
-- subtransaction (and the client sends a lone commit to oncely_commit directly).
CREATE FUNCTION ${schema}.oncely_commit_packed(p_commits text, p_later integer[], p_channel text) RETURNS text
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
      ORDER BY ord), p_channel);
    FOR k IN 1..cardinality(v_rest) LOOP
      v_results[v_rest[k]] := v_each[k];
    END LOOP;
  END IF;
  IF v_notify THEN
    PERFORM pg_notify(p_channel, '');
  END IF;
  RETURN '{"results": [' || array_to_string(v_results, ',', 'null') || '], "seqs": ' || v_seqs::text || '}';
END
$oncely$;
