import { snapshotRecord } from "../journal/sql-rows.js";
import type { SnapshotRecord } from "../journal/types.js";
import { SNAPSHOT_COLUMNS } from "./columns.js";
import { prepared } from "./prepared.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/** LIMIT NULL is "no limit" in PostgreSQL. */
export const sqlLimit = (limit: number | undefined): number | null =>
  limit === undefined || !Number.isFinite(limit) ? null : Math.max(0, Math.floor(limit));

export async function streamVersion(q: Queryable, t: Tables, stream: string): Promise<number> {
  const result = await q.query(
    prepared(`SELECT coalesce(max(version), 0) AS v FROM ${t.events} WHERE stream = $1`, [stream]),
  );
  return Number(result.rows[0].v);
}

export async function latestSnapshot(q: Queryable, t: Tables, stream: string): Promise<SnapshotRecord | undefined> {
  const result = await q.query(prepared(`SELECT ${SNAPSHOT_COLUMNS} FROM ${t.snapshots} WHERE stream = $1`, [stream]));
  return result.rows[0] ? snapshotRecord(result.rows[0]) : undefined;
}

export async function listStreams(q: Queryable, t: Tables, prefix: string, limit: number): Promise<string[]> {
  // `stream >= prefix` starts the (stream, version) index scan at the prefix; starts_with checks it
  // exactly (LIKE would treat % and _ as wildcards). The column's "C" collation makes both bytewise.
  const result = await q.query(
    `SELECT DISTINCT stream FROM ${t.events} WHERE stream >= $1 AND starts_with(stream, $1)
     ORDER BY stream LIMIT $2`,
    [prefix, sqlLimit(limit)],
  );
  return result.rows.map((r: { stream: string }) => r.stream);
}
