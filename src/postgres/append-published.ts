import { publishedSlice } from "../journal/published.js";
import type { NewPublished } from "../journal/types.js";
import { prepared } from "./prepared.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/** One append to the published log, as queued for a batch. */
export interface PublishedAppend {
  entry: NewPublished;
  now: number;
}

/**
 * One call of `oncely_publish` (schema/0005_published_slices/oncely_publish.sql): the append with its
 * slice, its ordering lock and its NOTIFY.
 */
export async function appendPublished(q: Queryable, t: Tables, entry: NewPublished, now: number): Promise<number> {
  const result = await q.query(`SELECT ${t.publishFunction}($1, $2, $3, $4, $5) AS position`, [
    entry.messageId,
    entry.subject,
    entry.body,
    now,
    publishedSlice(entry, t.sliceCount),
  ]);
  return Number(result.rows[0].position);
}

/** One call of `oncely_publish_batch` (schema/0005_published_slices/oncely_publish_batch.sql): the positions, in the order of `appends`. */
export async function appendPublishedBatch(
  q: Queryable,
  t: Tables,
  appends: readonly PublishedAppend[],
): Promise<number[]> {
  const result = await q.query(
    prepared(
      `SELECT ${t.publishBatchFunction}($1::text[], $2::text[], $3::text[], $4::bigint[], $5::integer[]) AS positions`,
      [
        appends.map((a) => a.entry.messageId),
        appends.map((a) => a.entry.subject),
        appends.map((a) => a.entry.body),
        appends.map((a) => a.now),
        appends.map((a) => publishedSlice(a.entry, t.sliceCount)),
      ],
    ),
  );
  return (result.rows[0].positions as (string | number)[]).map(Number);
}
