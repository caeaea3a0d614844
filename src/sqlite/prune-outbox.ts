import type { Sql } from "./sql.js";

/**
 * One batch of outbox retention: at most `limit` done rows last changed strictly before `before`.
 * A single statement is its own short write transaction; callers loop for more.
 */
export function pruneOutbox(sql: Sql, before: number, limit: number): number {
  return sql
    .stmt(
      `DELETE FROM outbox WHERE id IN (
         SELECT id FROM outbox WHERE status = 'done' AND updated_at < ? LIMIT ?)`,
    )
    .run(before, limit).changes;
}
