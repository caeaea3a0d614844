import { parkedRecord } from "../journal/sql-rows.js";
import type { ParkedRecord } from "../journal/types.js";
import { PARKED_COLUMNS } from "./columns.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

export async function listParked(
  q: Queryable,
  t: Tables,
  consumer: string,
  source: string | undefined,
): Promise<ParkedRecord[]> {
  const result = await q.query(
    `SELECT ${PARKED_COLUMNS} FROM ${t.parked}
     WHERE consumer = $1 AND ($2::text IS NULL OR source = $2::text) ORDER BY source, version`,
    [consumer, source ?? null],
  );
  return result.rows.map(parkedRecord);
}
