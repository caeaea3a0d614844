import type { NewPublished } from "../journal/types.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/** One call of `oncely_publish` (see published-log.ts): the append, its ordering lock and its NOTIFY. */
export async function appendPublished(q: Queryable, t: Tables, entry: NewPublished, now: number): Promise<number> {
  const result = await q.query(`SELECT ${t.publishFunction}($1, $2, $3, $4) AS position`, [
    entry.messageId,
    entry.subject,
    entry.body,
    now,
  ]);
  return Number(result.rows[0].position);
}
