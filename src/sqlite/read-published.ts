import { publishedRecord } from "../journal/sql-rows.js";
import type { PublishedRecord } from "../journal/types.js";
import { type Sql, sqliteLimit } from "./sql.js";

/**
 * Entries after a position; with `slices`, only theirs. The slice filter is a JSON array joined
 * by `IN`, so that one statement serves any set; the index `published_slice (slice, position)`
 * seeks each slice's entries after the position.
 */
export function readPublished(
  sql: Sql,
  after: number,
  limit: number | undefined,
  slices?: readonly number[],
): PublishedRecord[] {
  if (slices === undefined) {
    return sql
      .stmt("SELECT * FROM published WHERE position > ? ORDER BY position LIMIT ?")
      .all(after, sqliteLimit(limit))
      .map(publishedRecord);
  }
  if (slices.length === 0) return [];
  return sql
    .stmt(
      `SELECT * FROM published WHERE slice IN (SELECT value FROM json_each(?)) AND position > ?
       ORDER BY position LIMIT ?`,
    )
    .all(JSON.stringify(slices), after, sqliteLimit(limit))
    .map(publishedRecord);
}
