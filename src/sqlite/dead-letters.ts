import { deadLetterRecord } from "../journal/sql-rows.js";
import type { DeadLetterFilter, DeadLetterRecord } from "../journal/types.js";
import { type Sql, sqliteLimit } from "./sql.js";

export function listDeadLetters(sql: Sql, f: DeadLetterFilter): DeadLetterRecord[] {
  return sql
    .stmt(
      `SELECT * FROM dead_letters
       WHERE (@consumer IS NULL OR consumer = @consumer) AND (@status IS NULL OR status = @status)
       ORDER BY first_failed_at, id LIMIT @limit`,
    )
    .all({
      consumer: f.consumer ?? null,
      status: f.status ?? null,
      limit: sqliteLimit(f.limit),
    })
    .map(deadLetterRecord);
}

export function getDeadLetter(sql: Sql, id: string): DeadLetterRecord | undefined {
  const row = sql.stmt("SELECT * FROM dead_letters WHERE id = ?").get(id);
  return row ? deadLetterRecord(row) : undefined;
}

/** Only an open dead letter can be resolved; the first resolution stays. */
export function resolveDeadLetter(sql: Sql, id: string, status: "replayed" | "discarded", now: number): boolean {
  return (
    sql
      .stmt("UPDATE dead_letters SET status = ?, resolved_at = ? WHERE id = ? AND status = 'open'")
      .run(status, now, id).changes > 0
  );
}
