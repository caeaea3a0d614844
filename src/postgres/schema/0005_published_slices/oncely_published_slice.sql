-- oncely_published_slice(body, message_id, count) -> integer: the slice of a published entry that
-- came without one, as backfilledPublishedSlice in src/journal/published.ts computes it: the slice of
-- its body's `aggregateId` (the envelope's producing aggregate) when the body is a JSON object that
-- has one as a string, else of its message id. Serves the backfill of entries published before
-- slices, and a publish by a client older than this migration (which passes no slice). Never fails:
-- a body that is not JSON is keyed by its message id (the exception block costs a subtransaction,
-- only on those two paths).
CREATE FUNCTION ${schema}.oncely_published_slice(p_body text, p_message_id text, p_count integer)
RETURNS integer LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $oncely$
DECLARE
  v_key text;
BEGIN
  BEGIN
    IF jsonb_typeof(p_body::jsonb) = 'object' AND jsonb_typeof(p_body::jsonb->'aggregateId') = 'string' THEN
      v_key := p_body::jsonb->>'aggregateId';
    END IF;
  EXCEPTION WHEN others THEN
    v_key := NULL;
  END;
  RETURN ${schema}.oncely_slice_of(coalesce(v_key, p_message_id), p_count);
END
$oncely$;
