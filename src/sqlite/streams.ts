import { eventRecord, snapshotRecord, streamVersionRecord } from "../journal/sql-rows.js";
import type { EventRecord, SnapshotRecord, StreamVersion } from "../journal/types.js";
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

/** Streams under a prefix with their versions; `listStreams` is the same read, names only. */
export function listStreamVersions(sql: Sql, prefix: string, limit: number): StreamVersion[] {
  // `stream >= prefix` lets the (stream, version) index start at the prefix; substr checks it exactly
  // (LIKE would be case-insensitive and treat % and _ as wildcards). The max comes from the same
  // covering-index walk; measured on 2,000 streams of about 20 events: 4.2 ms against 2.8 ms for
  // the names alone (DISTINCT), a listing's cost, kept for one statement serving both reads.
  return sql
    .stmt(
      `SELECT stream, max(version) AS version FROM events
       WHERE stream >= @prefix AND substr(stream, 1, length(@prefix)) = @prefix
       GROUP BY stream ORDER BY stream LIMIT @limit`,
    )
    .all({ prefix, limit: sqliteLimit(limit) })
    .map(streamVersionRecord);
}
