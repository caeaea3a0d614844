import { deadLetterRecord } from "../journal/sql-rows.js";
import type { DeadLetterFilter, DeadLetterRecord } from "../journal/types.js";
import { DEAD_LETTER_COLUMNS } from "./columns.js";
import type { Queryable } from "./sql.js";
import { sqlLimit } from "./streams.js";
import type { Tables } from "./tables.js";

export async function listDeadLetters(q: Queryable, t: Tables, f: DeadLetterFilter): Promise<DeadLetterRecord[]> {
  const result = await q.query(
    `SELECT ${DEAD_LETTER_COLUMNS} FROM ${t.deadLetters}
     WHERE ($1::text IS NULL OR consumer = $1::text) AND ($2::text IS NULL OR status = $2::text)
     ORDER BY first_failed_at, id LIMIT $3`,
    [f.consumer ?? null, f.status ?? null, sqlLimit(f.limit)],
  );
  return result.rows.map(deadLetterRecord);
}

export async function getDeadLetter(q: Queryable, t: Tables, id: string): Promise<DeadLetterRecord | undefined> {
  const result = await q.query(`SELECT ${DEAD_LETTER_COLUMNS} FROM ${t.deadLetters} WHERE id = $1`, [id]);
  return result.rows[0] ? deadLetterRecord(result.rows[0]) : undefined;
}

/** Only an open dead letter can be resolved; the first resolution stays. */
export async function resolveDeadLetter(
  q: Queryable,
  t: Tables,
  id: string,
  status: "replayed" | "discarded",
  now: number,
): Promise<boolean> {
  const result = await q.query(
    `UPDATE ${t.deadLetters} SET status = $2, resolved_at = $3 WHERE id = $1 AND status = 'open'`,
    [id, status, now],
  );
  return (result.rowCount ?? 0) > 0;
}
