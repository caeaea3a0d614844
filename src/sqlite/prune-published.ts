import { PUBLISHED_READER_SOURCE } from "../journal/published.js";
import type { Sql } from "./sql.js";

/**
 * One batch of published-log retention: entries older than `before` that every registered reader
 * has passed (no reader: MIN is NULL and nothing matches). One statement, one short transaction.
 */
export function prunePublished(sql: Sql, before: number, limit: number): number {
  return sql
    .stmt(
      `DELETE FROM published WHERE position IN (
         SELECT position FROM published
         WHERE published_at < ? AND position <= (SELECT MIN(version) FROM checkpoints WHERE source = ?)
         ORDER BY position LIMIT ?)`,
    )
    .run(before, PUBLISHED_READER_SOURCE, limit).changes;
}
