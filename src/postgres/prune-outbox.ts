import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/**
 * One batch of outbox retention: at most `limit` done rows last changed strictly before `before`.
 * SKIP LOCKED: a row another transaction holds right now is left for the next run, never waited
 * for. A done row never changes again (every update requires `status <> 'done'`), so the status
 * checked here cannot be stale by the time the row is deleted.
 */
export async function pruneOutbox(q: Queryable, t: Tables, before: number, limit: number): Promise<number> {
  const result = await q.query(
    `WITH old AS MATERIALIZED (
       SELECT id FROM ${t.outbox}
       WHERE status = 'done' AND updated_at < $1
       LIMIT $2
       FOR UPDATE SKIP LOCKED)
     DELETE FROM ${t.outbox} o USING old WHERE o.id = old.id`,
    [before, limit],
  );
  return result.rowCount ?? 0;
}
