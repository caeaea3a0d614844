import { summaryFromRows, summaryQueries } from "../journal/summary-sql.js";
import type { JournalSummary } from "../journal/types.js";
import type { Sql } from "./sql.js";

const QUERIES = summaryQueries({ outbox: "outbox", parked: "parked", deadLetters: "dead_letters" });

/** One read transaction, so the three counts describe one moment. */
export function summarize(sql: Sql): JournalSummary {
  const read = sql.db.transaction(() =>
    summaryFromRows(
      sql.stmt(QUERIES.outbox).all() as Record<string, unknown>[],
      sql.stmt(QUERIES.parked).all() as Record<string, unknown>[],
      sql.stmt(QUERIES.deadLetters).all() as Record<string, unknown>[],
    ),
  );
  return read();
}
