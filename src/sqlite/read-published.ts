import { publishedRecord } from "../journal/sql-rows.js";
import type { PublishedRecord } from "../journal/types.js";
import { type Sql, sqliteLimit } from "./sql.js";

export function readPublished(sql: Sql, after: number, limit: number | undefined): PublishedRecord[] {
  return sql
    .stmt("SELECT * FROM published WHERE position > ? ORDER BY position LIMIT ?")
    .all(after, sqliteLimit(limit))
    .map(publishedRecord);
}
