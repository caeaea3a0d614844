import { summaryFromRows, summaryQueries } from "../journal/summary-sql.js";
import type { JournalSummary } from "../journal/types.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/** Three reads on the pool (in parallel): each count is exact, the three may be moments apart. */
export async function summarize(q: Queryable, t: Tables): Promise<JournalSummary> {
  const queries = summaryQueries(t);
  const [outbox, parked, deadLetters] = await Promise.all([
    q.query(queries.outbox),
    q.query(queries.parked),
    q.query(queries.deadLetters),
  ]);
  return summaryFromRows(outbox.rows, parked.rows, deadLetters.rows);
}
