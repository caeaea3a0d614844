-- Migration 0002: as in 0001_baseline, and an outbox row's slice (position 10) is unpacked.
--
-- oncely_unpack(commit jsonb) -> jsonb: a packed commit in the object format, for the per-commit
-- path (oncely_commit), which the set path leaves a commit to when it shares a key or the set path
-- fails. A lease-held outbox update ({"update": ...}) is not packed and passes as it is.
--
-- The packed format (packed-rows.ts): a commit's events, outbox rows and done rows are positional
-- arrays, fields in the orders of EVENT_FIELDS, OUTBOX_FIELDS and DONE_FIELDS, and the four arrays a
-- commit rarely fills (park, unpark, dead, docs) are left out when empty. A test checks this function
-- against those lists (test/journal/postgres-packed.int.test.ts).
CREATE OR REPLACE FUNCTION ${schema}.oncely_unpack(c jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $oncely$
  SELECT CASE WHEN c ? 'update' THEN c ELSE c || jsonb_build_object(
    'events', (SELECT coalesce(jsonb_agg(jsonb_build_object('event_id', r.v->0, 'type', r.v->1, 'data', r.v->2,
      'causation_id', r.v->3, 'correlation_id', r.v->4, 'schema_version', r.v->5) ORDER BY r.n), '[]'::jsonb)
      FROM jsonb_array_elements(c->'events') WITH ORDINALITY AS r(v, n)),
    'outbox', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.v->0, 'category', r.v->1, 'kind', r.v->2,
      'stream', r.v->3, 'payload', r.v->4, 'not_before', r.v->5, 'lease_owner', r.v->6, 'lease_until', r.v->7,
      'attempts', r.v->8, 'result', r.v->9, 'slice', r.v->10) ORDER BY r.n), '[]'::jsonb)
      FROM jsonb_array_elements(c->'outbox') WITH ORDINALITY AS r(v, n)),
    'done', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.v->0, 'outcome', r.v->1, 'result', r.v->2)
      ORDER BY r.n), '[]'::jsonb) FROM jsonb_array_elements(c->'done') WITH ORDINALITY AS r(v, n)),
    'park', coalesce(c->'park', '[]'::jsonb), 'unpark', coalesce(c->'unpark', '[]'::jsonb),
    'dead', coalesce(c->'dead', '[]'::jsonb), 'docs', coalesce(c->'docs', '[]'::jsonb)) END
$oncely$;
