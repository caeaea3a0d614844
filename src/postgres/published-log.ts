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
