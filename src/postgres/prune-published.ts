import { PUBLISHED_READER_SOURCE } from "../journal/published.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/**
 * One batch of published-log retention: entries older than `before` that every registered reader
 * has passed (no reader: MIN is NULL and nothing matches). Readers only move forward, so what they
 * had all passed when the statement read them stays passed; a reader registered later starts at
 * the oldest entry still kept, as a new durable consumer does on a broker with retention.
 */
export async function prunePublished(q: Queryable, t: Tables, before: number, limit: number): Promise<number> {
  const result = await q.query(
    `WITH old AS MATERIALIZED (
       SELECT position FROM ${t.published}
       WHERE published_at < $1
         AND position <= (SELECT MIN(version) FROM ${t.checkpoints} WHERE source = $2)
       ORDER BY position LIMIT $3)
     DELETE FROM ${t.published} p USING old WHERE p.position = old.position`,
    [before, PUBLISHED_READER_SOURCE, limit],
  );
  return result.rowCount ?? 0;
}
