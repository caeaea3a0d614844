import { streamVersionRecord } from "../journal/sql-rows.js";
import type { StreamVersion } from "../journal/types.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/** LIMIT NULL is "no limit" in PostgreSQL. */
export const sqlLimit = (limit: number | undefined): number | null =>
  limit === undefined || !Number.isFinite(limit) ? null : Math.max(0, Math.floor(limit));

/** Streams under a prefix with their versions; `listStreams` is the same read, names only. */
export async function listStreamVersions(
  q: Queryable,
  t: Tables,
  prefix: string,
  limit: number,
): Promise<StreamVersion[]> {
  // `stream >= prefix` starts the (stream, version) index scan at the prefix; starts_with checks it
  // exactly (LIKE would treat % and _ as wildcards). The column's "C" collation makes both bytewise.
  const result = await q.query(
    `SELECT stream, max(version) AS version FROM ${t.events} WHERE stream >= $1 AND starts_with(stream, $1)
     GROUP BY stream ORDER BY stream LIMIT $2`,
    [prefix, sqlLimit(limit)],
  );
  return result.rows.map(streamVersionRecord);
}
