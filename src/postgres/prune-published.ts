import { PUBLISHED_READER_SOURCE, PUBLISHED_SLICE_SOURCE_PREFIX } from "../journal/published.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/**
 * One batch of published-log retention: entries older than `before` that every registered reader
 * has passed (no reader: nothing matches). A reader is a `PUBLISHED_READER_SOURCE` checkpoint; for
 * an entry of slice s its position is the larger of that one and its checkpoint under
 * `publishedSliceSource(s)` (a reader of some slices). Readers only move forward, so what they
 * had all passed when the statement read them stays passed; a reader registered later starts at
 * the oldest entry still kept, as a new durable consumer does on a broker with retention.
 */
export async function prunePublished(q: Queryable, t: Tables, before: number, limit: number): Promise<number> {
  const result = await q.query(
    `WITH old AS MATERIALIZED (
       SELECT p.position FROM ${t.published} p
       WHERE p.published_at < $1
         AND EXISTS (SELECT 1 FROM ${t.checkpoints} WHERE source = $2)
         AND NOT EXISTS (
           SELECT 1 FROM ${t.checkpoints} r
           WHERE r.source = $2
             AND GREATEST(r.version, coalesce((SELECT s.version FROM ${t.checkpoints} s
               WHERE s.consumer = r.consumer AND s.source = $4 || p.slice), 0)) < p.position)
       ORDER BY p.position LIMIT $3)
     DELETE FROM ${t.published} p USING old WHERE p.position = old.position`,
    [before, PUBLISHED_READER_SOURCE, limit, PUBLISHED_SLICE_SOURCE_PREFIX],
  );
  return result.rowCount ?? 0;
}
