import type { NewPublished } from "../journal/types.js";
import { prepared } from "./prepared.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/** One append to the published log, as queued for a batch. */
export interface PublishedAppend {
  entry: NewPublished;
  now: number;
}

/** One call of `oncely_publish` (schema/0001_baseline/oncely_publish.sql): the append, its ordering lock and its NOTIFY. */
export async function appendPublished(q: Queryable, t: Tables, entry: NewPublished, now: number): Promise<number> {
  const result = await q.query(`SELECT ${t.publishFunction}($1, $2, $3, $4) AS position`, [
    entry.messageId,
    entry.subject,
    entry.body,
    now,
  ]);
  return Number(result.rows[0].position);
}

/** One call of `oncely_publish_batch` (schema/0001_baseline/oncely_publish_batch.sql): the positions, in the order of `appends`. */
export async function appendPublishedBatch(
  q: Queryable,
  t: Tables,
  appends: readonly PublishedAppend[],
): Promise<number[]> {
  const result = await q.query(
    prepared(`SELECT ${t.publishBatchFunction}($1::text[], $2::text[], $3::text[], $4::bigint[]) AS positions`, [
      appends.map((a) => a.entry.messageId),
      appends.map((a) => a.entry.subject),
      appends.map((a) => a.entry.body),
      appends.map((a) => a.now),
    ]),
  );
  return (result.rows[0].positions as (string | number)[]).map(Number);
}
