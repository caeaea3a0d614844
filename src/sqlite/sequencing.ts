import { PUBLISHED_READER_SOURCE, PUBLISHED_SLICE_SOURCE_PREFIX } from "../journal/published.js";
import { parkedRecord } from "../journal/sql-rows.js";
import type { ForgottenConsumer, ParkedRecord } from "../journal/types.js";
import type { Sql } from "./sql.js";

export function getCheckpoint(sql: Sql, consumer: string, source: string): number {
  const row = sql.stmt("SELECT version FROM checkpoints WHERE consumer = ? AND source = ?").get(consumer, source) as
    | { version: number }
    | undefined;
  return row?.version ?? 0;
}

export function listParked(sql: Sql, consumer: string, source: string | undefined): ParkedRecord[] {
  return sql
    .stmt(
      `SELECT * FROM parked WHERE consumer = @consumer AND (@source IS NULL OR source = @source)
       ORDER BY source, version`,
    )
    .all({ consumer, source: source ?? null })
    .map(parkedRecord);
}

export function getParked(sql: Sql, consumer: string, source: string, version: number): ParkedRecord | undefined {
  const row = sql
    .stmt("SELECT * FROM parked WHERE consumer = ? AND source = ? AND version = ?")
    .get(consumer, source, version) as Record<string, unknown> | undefined;
  return row ? parkedRecord(row) : undefined;
}

/** See `Journal.forgetConsumer`; run inside one transaction by the caller. */
export function forgetConsumer(sql: Sql, consumer: string, keepReader: boolean): ForgottenConsumer {
  return {
    inbox: sql.stmt("DELETE FROM inbox WHERE consumer = ?").run(consumer).changes,
    checkpoints: sql
      .stmt("DELETE FROM checkpoints WHERE consumer = ? AND NOT (? AND (source = ? OR substr(source, 1, ?) = ?))")
      .run(
        consumer,
        keepReader ? 1 : 0,
        PUBLISHED_READER_SOURCE,
        PUBLISHED_SLICE_SOURCE_PREFIX.length,
        PUBLISHED_SLICE_SOURCE_PREFIX,
      ).changes,
    parked: sql.stmt("DELETE FROM parked WHERE consumer = ?").run(consumer).changes,
  };
}
