import { commitSetFunctionSql, perCommitRestSql } from "./commit-set-function.js";
import { unpackFunctionSql } from "./packed-rows.js";
import type { Tables } from "./tables.js";

/**
 * Migration 8: the batch as ONE JSON text in, ONE JSON text out. `oncely_commit_json(commits text,
 * channel text)` takes `[commit, commit, ...]` and answers `[result, result, ...]`, each result
 * exactly as `oncely_commit` (commit-function.ts) answers it.
 *
 * Why: as a `text[]` parameter, every commit's JSON had to be escaped into an array literal by the
 * client (each `"` and `\\` doubled) and the answer parsed back out of one; measured on the order
 * workflow, that escaping alone was a sixth of every byte the client process allocated, and the
 * array parsing another twentieth. A JSON array needs neither: the client joins the commits' texts
 * and `JSON.parse`s the answer, and the server parses the batch once, into the `jsonb[]` the set
 * path (commit-set-function.ts, here taking `jsonb[]`) reads.
 *
 * Each commit keeps its own fate as before. When the set path raises, every commit it did not
 * answer goes through `oncely_commit`, one subtransaction each. When the batch cannot be held as
 * jsonb at all (a NUL byte, `\\u0000`, in some commit's JSON text: json accepts it, jsonb does not),
 * it is split as json instead, which keeps each commit's text as sent, and every commit goes through
 * `oncely_commit`, where only the one holding the NUL byte fails. A lone commit skips the set path:
 * its fixed cost (a statement per table, even when empty) is more than one subtransaction.
 *
 * Migration 10, `keyed`: `oncely_commit_keyed(commits text, later integer[], channel text)` is the
 * same with two steps of the set path moved to the client, which already knows both: `later` names
 * the commits sharing a key (stream, inbox key, outbox id) with an earlier one (`writeKeys`), and an
 * applied commit is answered `{"base": version before it}` with the inserted rows' seqs once for the
 * batch, `{"results": [...], "seqs": {id: seq}}`, from which the client builds each answer. The
 * unkeyed function stays for clients of the previous version during a rolling upgrade.
 *
 * Migration 11, `packed`: `oncely_commit_packed` is the keyed function taking each commit's rows as
 * positional arrays (packed-rows.ts), about two fifths less parsing per batch; a commit left to
 * the per-commit path is unpacked (`oncely_unpack`) into the object format `oncely_commit` reads.
 * The keyed function stays, as the unkeyed one did, for the previous version's clients.
 */
export const commitJsonFunctionSql = (t: Tables, options: { keyed?: boolean; packed?: boolean } = {}): string => {
  const packed = options.packed === true;
  const keyed = options.keyed === true || packed;
  const name = packed ? t.commitPackedFunction : keyed ? t.commitKeyedFunction : t.commitJsonFunction;
  const setName = packed ? t.commitSetPackedFunction : t.commitSetKeyedFunction;
  return `${packed ? unpackFunctionSql(t) : ""}
${commitSetFunctionSql(t, { keyLookups: true, input: "jsonb", withBatchFunction: false, keyed, packed })}
CREATE OR REPLACE FUNCTION ${
    keyed ? `${name}(p_commits text, p_later integer[], p_channel text)` : `${name}(p_commits text, p_channel text)`
  } RETURNS text
LANGUAGE plpgsql AS $oncely$
DECLARE
  v_c jsonb[];
  v_texts text[];
  v_n integer;
  v_results text[];
  v_notify boolean := false;
  v_rest integer[];
  v_each text[];${keyed ? "\n  v_seqs jsonb := '{}';" : ""}${packed ? "\n  v_x json;" : ""}
BEGIN
  -- One subtransaction for the parse and the whole set path: an error in either rolls all of it
  -- back (variables keep what was assigned), and the commits left unanswered go one at a time.
  BEGIN
    v_c := ARRAY(SELECT e FROM jsonb_array_elements(p_commits::jsonb) AS e);
    IF cardinality(v_c) > 1 THEN
      ${
        keyed
          ? `SELECT s.results, s.notify, s.seqs INTO v_results, v_notify, v_seqs FROM ${setName}(v_c, p_later) s;`
          : `SELECT s.results, s.notify INTO v_results, v_notify FROM ${t.commitSetFunction}(v_c) s;`
      }
    END IF;
  EXCEPTION WHEN OTHERS THEN
    v_results := NULL;
    v_notify := false;${keyed ? "\n    v_seqs := '{}';" : ""}
  END;
  IF v_c IS NULL THEN
${
  packed
    ? `    -- Each commit that jsonb can hold, unpacked for the per-commit path; the one it cannot, as
    -- sent: the per-commit path fails it alone, with the server's own error.
    v_texts := ARRAY[]::text[];
    FOR v_x IN SELECT x FROM json_array_elements(p_commits::json) AS x LOOP
      BEGIN
        v_texts := v_texts || ${t.unpackFunction}(v_x::jsonb)::text;
      EXCEPTION WHEN OTHERS THEN
        v_texts := v_texts || v_x::text;
      END;
    END LOOP;`
    : "    v_texts := ARRAY(SELECT x::text FROM json_array_elements(p_commits::json) AS x);"
}
  END IF;
  v_n := coalesce(cardinality(v_c), cardinality(v_texts), 0);
  IF v_results IS NULL THEN
    v_results := array_fill(NULL::text, ARRAY[v_n]);
  END IF;
  -- Which commits the set path left unanswered, looked for only when there are some (migration 12).
  IF array_position(v_results, NULL) IS NULL THEN
    v_rest := '{}';
  ELSE
    v_rest := ARRAY(SELECT i FROM generate_series(1, v_n) AS i WHERE v_results[i] IS NULL ORDER BY i);
  END IF;
${perCommitRestSql(t, packed ? `coalesce(v_texts[i], ${t.unpackFunction}(v_c[i])::text)` : "coalesce(v_texts[i], v_c[i]::text)")}
  ${
    keyed
      ? `RETURN '{"results": [' || array_to_string(v_results, ',', 'null') || '], "seqs": ' || v_seqs::text || '}';`
      : `RETURN '[' || array_to_string(v_results, ',', 'null') || ']';`
  }
END
$oncely$;
`;
};
