import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/** Strictly before `before`: a record made at exactly that time is kept. */
export async function pruneInbox(q: Queryable, t: Tables, before: number): Promise<number> {
  const result = await q.query(`DELETE FROM ${t.inbox} WHERE recorded_at < $1`, [before]);
  return result.rowCount ?? 0;
}
