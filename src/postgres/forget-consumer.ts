import { PUBLISHED_READER_SOURCE, PUBLISHED_SLICE_SOURCE_PREFIX } from "../journal/published.js";
import type { ForgottenConsumer } from "../journal/types.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/** See `Journal.forgetConsumer`: one statement, so one transaction. */
export async function forgetConsumer(
  q: Queryable,
  t: Tables,
  consumer: string,
  keepReader: boolean,
): Promise<ForgottenConsumer> {
  const result = await q.query(
    `WITH i AS (DELETE FROM ${t.inbox} WHERE consumer = $1 RETURNING 1),
          c AS (DELETE FROM ${t.checkpoints} WHERE consumer = $1 AND NOT ($2 AND (source = $3 OR left(source, length($4)) = $4)) RETURNING 1),
          p AS (DELETE FROM ${t.parked} WHERE consumer = $1 RETURNING 1)
     SELECT (SELECT count(*) FROM i)::int AS inbox, (SELECT count(*) FROM c)::int AS checkpoints,
            (SELECT count(*) FROM p)::int AS parked`,
    [consumer, keepReader, PUBLISHED_READER_SOURCE, PUBLISHED_SLICE_SOURCE_PREFIX],
  );
  const row = result.rows[0] as ForgottenConsumer;
  return { inbox: row.inbox, checkpoints: row.checkpoints, parked: row.parked };
}
