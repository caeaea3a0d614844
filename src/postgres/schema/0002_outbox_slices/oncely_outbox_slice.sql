-- oncely_outbox_slice(category, stream, payload, count) -> integer: an outbox row's slice, as
-- outboxSlice in src/journal/outbox-slice.ts computes it: the slice of the actor that handles the row
-- (a message's receiver, `payload.to`; otherwise the row's stream), keyed by the address's id (the
-- text after the first "/"), or by the whole stream when it is not an address. PL/pgSQL, whose body
-- is not checked at creation: oncely_slice_of is created after it (files run in name order).
CREATE FUNCTION ${schema}.oncely_outbox_slice(p_category text, p_stream text, p_payload jsonb, p_count integer)
RETURNS integer LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $oncely$
DECLARE
  v_stream text := CASE WHEN p_category = 'message' AND jsonb_typeof(p_payload->'to') = 'string'
    THEN p_payload->>'to' ELSE p_stream END;
  v_slash integer := position('/' IN v_stream);
BEGIN
  IF v_slash <= 1 OR v_slash = length(v_stream) THEN
    RETURN ${schema}.oncely_slice_of(v_stream, p_count);
  END IF;
  RETURN ${schema}.oncely_slice_of(substr(v_stream, v_slash + 1), p_count);
END
$oncely$;
