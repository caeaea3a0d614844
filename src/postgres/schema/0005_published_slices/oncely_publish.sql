-- Migration 0005: as in 0001_baseline, and the entry's `slice` is inserted (0005_published_slices).
-- The slice comes from the client (sliceOf(key) among the journal's sliceCount); a client older than
-- this migration passes none (the 4-argument call), and the function computes it from the body.
--
-- oncely_publish(message_id, subject, body, now, slice) -> position: appends one entry to the
-- published log, or answers the position its message id already has, and NOTIFYs the schema's
-- published channel. The client calls it for an entry of a batch that oncely_publish_batch refused as
-- a whole (append-published.ts).
--
-- Why a lock: an identity value is taken at INSERT but becomes visible at COMMIT, so two concurrent
-- appenders could commit out of position order, and a reader that already moved past the higher
-- position would never see the lower one. The transaction-scoped advisory lock makes appenders take
-- turns until their commit (the function is called as one autocommit statement), so an entry never
-- becomes visible after one with a higher position did.
DROP FUNCTION ${schema}.oncely_publish(text, text, text, bigint);
CREATE FUNCTION ${schema}.oncely_publish(
  p_message_id text, p_subject text, p_body text, p_now bigint, p_slice integer DEFAULT NULL
) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  found_position bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(${published_lock}, 0));
  SELECT position INTO found_position FROM ${schema}.published WHERE message_id = p_message_id;
  IF FOUND THEN
    RETURN found_position;
  END IF;
  INSERT INTO ${schema}.published (message_id, subject, body, published_at, slice)
    VALUES (p_message_id, p_subject, p_body, p_now,
      coalesce(p_slice, ${schema}.oncely_published_slice(p_body, p_message_id, ${slice_count})))
    RETURNING position INTO found_position;
  PERFORM pg_notify(${published_channel}, '');
  RETURN found_position;
END
$fn$;
