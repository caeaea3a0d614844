import type { Tables } from "./tables.js";

const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * Migration 4: the published log of the journal transport, and `oncely_publish`, which appends
 * one entry (or returns the position its message id already has) and NOTIFYs the schema's
 * published channel.
 *
 * Why a lock: an identity value is taken at INSERT, but becomes visible at COMMIT, so two
 * concurrent appenders could commit out of position order and a reader that already moved past
 * the higher position would never see the lower one. The transaction-scoped advisory lock makes
 * appenders take turns until their commit (the function is called as one autocommit statement),
 * so an entry never becomes visible after one with a higher position did.
 */
export function publishedLogSql(t: Tables): string {
  return `
    CREATE TABLE ${t.published} (
      position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      message_id text COLLATE "C" NOT NULL UNIQUE,
      subject text NOT NULL,
      body text NOT NULL,
      published_at bigint NOT NULL
    );
    CREATE FUNCTION ${t.publishFunction}(p_message_id text, p_subject text, p_body text, p_now bigint)
    RETURNS bigint LANGUAGE plpgsql AS $fn$
    DECLARE
      found_position bigint;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended(${literal(`oncely.published:${t.schema}`)}, 0));
      SELECT position INTO found_position FROM ${t.published} WHERE message_id = p_message_id;
      IF FOUND THEN
        RETURN found_position;
      END IF;
      INSERT INTO ${t.published} (message_id, subject, body, published_at)
        VALUES (p_message_id, p_subject, p_body, p_now)
        RETURNING position INTO found_position;
      PERFORM pg_notify(${literal(t.publishedChannel)}, '');
      RETURN found_position;
    END
    $fn$;
  `;
}

/**
 * Migration 14: `oncely_publish_batch`, the appends that arrive together as one call, one
 * transaction and one WAL flush (each `oncely_publish` call was a transaction and a flush of its
 * own: on the shop, 3.7 an order). Under the same advisory lock as `oncely_publish`, so the two
 * take turns (a process not yet upgraded keeps appending one at a time). Entries are appended in
 * array order; one whose message id is in the log already (from before, or earlier in the same
 * batch) gets that position and is not appended again. One NOTIFY for the batch.
 */
export function publishBatchFunctionSql(t: Tables): string {
  return `
    CREATE FUNCTION ${t.publishBatchFunction}(
      p_message_ids text[], p_subjects text[], p_bodies text[], p_nows bigint[]
    ) RETURNS bigint[] LANGUAGE plpgsql AS $fn$
    DECLARE
      positions bigint[] := '{}';
      found_position bigint;
      appended boolean := false;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended(${literal(`oncely.published:${t.schema}`)}, 0));
      FOR i IN 1 .. coalesce(array_length(p_message_ids, 1), 0) LOOP
        SELECT position INTO found_position FROM ${t.published} WHERE message_id = p_message_ids[i];
        IF NOT FOUND THEN
          INSERT INTO ${t.published} (message_id, subject, body, published_at)
            VALUES (p_message_ids[i], p_subjects[i], p_bodies[i], p_nows[i])
            RETURNING position INTO found_position;
          appended := true;
        END IF;
        positions := positions || found_position;
      END LOOP;
      IF appended THEN
        PERFORM pg_notify(${literal(t.publishedChannel)}, '');
      END IF;
      RETURN positions;
    END
    $fn$;
  `;
}
