import { publishedSlice } from "../journal/published.js";
import type { NewPublished } from "../journal/types.js";
import type { Sql } from "./sql.js";

/**
 * Append to the published log, or return the position a message id already has. One statement:
 * the no-op update on conflict makes RETURNING answer for a known id too. SQLite has one writer at
 * a time, so positions become visible in position order.
 */
export function appendPublished(sql: Sql, entry: NewPublished, now: number, sliceCount: number): number {
  const row = sql
    .stmt(
      `INSERT INTO published (message_id, subject, body, published_at, slice) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (message_id) DO UPDATE SET message_id = excluded.message_id
       RETURNING position`,
    )
    .get(entry.messageId, entry.subject, entry.body, now, publishedSlice(entry, sliceCount)) as { position: number };
  return Number(row.position);
}
