import { publishedRecord } from "../journal/sql-rows.js";
import type { PublishedRecord } from "../journal/types.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

export async function readPublished(
  q: Queryable,
  t: Tables,
  after: number,
  limit: number | undefined,
): Promise<PublishedRecord[]> {
  const bounded = limit !== undefined && Number.isFinite(limit);
  const result = await q.query(
    `SELECT * FROM ${t.published} WHERE position > $1 ORDER BY position${bounded ? " LIMIT $2" : ""}`,
    bounded ? [after, Math.max(0, Math.floor(limit))] : [after],
  );
  return result.rows.map(publishedRecord);
}
