import { PUBLISHED_READER_SOURCE, PUBLISHED_SLICE_SOURCE_PREFIX } from "../journal/published.js";
import type { Sql } from "./sql.js";

/**
 * One batch of published-log retention: entries older than `before` that every registered reader
 * has passed (see `PublishedLog.prunePublished`). A reader is a `PUBLISHED_READER_SOURCE`
 * checkpoint; for an entry of slice s its position is the larger of that one and its checkpoint
 * under `publishedSliceSource(s)`. No reader: nothing matches. One statement, one short transaction.
 */
export function prunePublished(sql: Sql, before: number, limit: number): number {
  return sql
    .stmt(
      `DELETE FROM published WHERE position IN (
         SELECT p.position FROM published p
         WHERE p.published_at < ?
           AND EXISTS (SELECT 1 FROM checkpoints WHERE source = ?)
           AND NOT EXISTS (
             SELECT 1 FROM checkpoints r
             WHERE r.source = ?
               AND max(r.version, coalesce((SELECT s.version FROM checkpoints s
                 WHERE s.consumer = r.consumer AND s.source = ? || p.slice), 0)) < p.position)
         ORDER BY p.position LIMIT ?)`,
    )
    .run(before, PUBLISHED_READER_SOURCE, PUBLISHED_READER_SOURCE, PUBLISHED_SLICE_SOURCE_PREFIX, limit).changes;
}
