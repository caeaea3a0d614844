-- oncely_slice_of(key text, count integer) -> integer: the slice of a key among `count` slices, as
-- sliceOf in src/core/slices.ts computes it: FNV-1a (32 bits) over the key's UTF-16 code units (a
-- character beyond U+FFFF is its two surrogates), masked to `count` (a power of two). The journal
-- computes new rows' slices in TypeScript; this function serves the migration that backfills the rows
-- already there, and a test holds it equal to the TypeScript one on many keys. The product of a 32-bit
-- hash and the 25-bit FNV prime fits a bigint, so the arithmetic is exact before the mask.
CREATE FUNCTION ${schema}.oncely_slice_of(p_key text, p_count integer) RETURNS integer
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $oncely$
DECLARE
  v_hash bigint := 2166136261;
  v_code integer;
  v_i integer;
BEGIN
  FOR v_i IN 1 .. length(p_key) LOOP
    v_code := ascii(substr(p_key, v_i, 1));
    IF v_code > 65535 THEN
      v_hash := ((v_hash # (55296 + ((v_code - 65536) >> 10))) * 16777619) & 4294967295;
      v_hash := ((v_hash # (56320 + ((v_code - 65536) & 1023))) * 16777619) & 4294967295;
    ELSE
      v_hash := ((v_hash # v_code) * 16777619) & 4294967295;
    END IF;
  END LOOP;
  RETURN (v_hash & (p_count - 1))::integer;
END
$oncely$;
