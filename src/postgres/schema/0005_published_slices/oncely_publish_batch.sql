-- Migration 0005: as in 0001_baseline, and each entry's `slice` is inserted (0005_published_slices);
-- a client older than this migration passes no slices (the 4-argument call), and the function
-- computes each from its body.
--
-- oncely_publish_batch(message_ids, subjects, bodies, nows, slices) -> positions: the appends that
-- arrive together as one call, one transaction and one WAL flush. Under the same advisory lock as
-- oncely_publish (see there why), so the two take turns. Entries are appended in array order; one
-- whose message id is in the log already (from before, or earlier in the same batch) gets that
-- position and is not appended again. One NOTIFY for the batch, when it appended something.
DROP FUNCTION ${schema}.oncely_publish_batch(text[], text[], text[], bigint[]);
CREATE FUNCTION ${schema}.oncely_publish_batch(
  p_message_ids text[], p_subjects text[], p_bodies text[], p_nows bigint[], p_slices integer[] DEFAULT NULL
) RETURNS bigint[] LANGUAGE plpgsql AS $fn$
DECLARE
  positions bigint[] := '{}';
  found_position bigint;
  appended boolean := false;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(${published_lock}, 0));
  FOR i IN 1 .. coalesce(array_length(p_message_ids, 1), 0) LOOP
    SELECT position INTO found_position FROM ${schema}.published WHERE message_id = p_message_ids[i];
    IF NOT FOUND THEN
      INSERT INTO ${schema}.published (message_id, subject, body, published_at, slice)
        VALUES (p_message_ids[i], p_subjects[i], p_bodies[i], p_nows[i],
          coalesce(p_slices[i], ${schema}.oncely_published_slice(p_bodies[i], p_message_ids[i], ${slice_count})))
        RETURNING position INTO found_position;
      appended := true;
    END IF;
    positions := positions || found_position;
  END LOOP;
  IF appended THEN
    PERFORM pg_notify(${published_channel}, '');
  END IF;
  RETURN positions;
END
$fn$;
