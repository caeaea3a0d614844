import { eventRecord, snapshotRecord } from "../journal/sql-rows.js";
import type { EventRecord, SnapshotRecord } from "../journal/types.js";
import { type Sql, sqliteLimit } from "./sql.js";

export function readStream(sql: Sql, stream: string, fromVersion: number, limit: number): EventRecord[] {
  const max = sqliteLimit(limit);
  return sql
    .stmt("SELECT * FROM events WHERE stream = ? AND version >= ? ORDER BY version LIMIT ?")
    .all(stream, fromVersion, max)
    .map(eventRecord);
}

export function streamVersion(sql: Sql, stream: string): number {
  return (sql.stmt("SELECT coalesce(max(version), 0) AS v FROM events WHERE stream = ?").get(stream) as { v: number })
    .v;
}

export function latestSnapshot(sql: Sql, stream: string): SnapshotRecord | undefined {
  const row = sql.stmt("SELECT * FROM snapshots WHERE stream = ?").get(stream);
  return row ? snapshotRecord(row) : undefined;
}

export function listStreams(sql: Sql, prefix: string, limit: number): string[] {
  const max = sqliteLimit(limit);
  // `stream >= prefix` lets the (stream, version) index start at the prefix; substr checks it exactly
  // (LIKE would be case-insensitive and treat % and _ as wildcards).
  return (
    sql
      .stmt(
        `SELECT DISTINCT stream FROM events WHERE stream >= @prefix AND substr(stream, 1, length(@prefix)) = @prefix
         ORDER BY stream LIMIT @limit`,
      )
      .all({ prefix, limit: max }) as { stream: string }[]
  ).map((r) => r.stream);
}
