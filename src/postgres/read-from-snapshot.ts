import { eventRecord, snapshotRecord } from "../journal/sql-rows.js";
import type { SnapshotTail } from "../journal/types.js";
import { prepared } from "./prepared.js";
import type { Queryable } from "./sql.js";
import { sqlLimit } from "./streams.js";
import type { Tables } from "./tables.js";

/** One `readFromSnapshot` call: a stream and the most events to read after its snapshot. */
export interface SnapshotTailRead {
  stream: string;
  limit: number;
}

/**
 * Many actors waking together, each its latest snapshot and the events after it, in ONE statement:
 * one round trip per batch where a snapshot read and then a stream read cost two, one after the
 * other. Snapshot rows (`k` = 0) and event rows (`k` = 1) share one row shape (UNION ALL): a
 * snapshot's state comes in `data`, its `taken_at` in `recorded_at`. The events' lower bound is the
 * snapshot's version read by the same statement (one snapshot, the statement's own), so the tail
 * starts right after the snapshot it comes with.
 */
export async function readFromSnapshots(
  q: Queryable,
  t: Tables,
  reads: readonly SnapshotTailRead[],
): Promise<SnapshotTail[]> {
  const result = await q.query(
    prepared(
      `WITH r AS MATERIALIZED (
         SELECT r.stream, r.lim, r.i, s.version AS snap_version, s.schema_version AS snap_schema,
           s.state::text AS snap_state, s.taken_at AS snap_taken
         FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS r(stream, lim, i)
         LEFT JOIN ${t.snapshots} s ON s.stream = r.stream)
       SELECT r.i, 0 AS k, r.stream, r.snap_version AS version, NULL::text AS event_id, NULL::text AS type,
         r.snap_state AS data, NULL::text AS causation_id, NULL::text AS correlation_id, r.snap_taken AS recorded_at,
         r.snap_schema AS schema_version
       FROM r WHERE r.snap_version IS NOT NULL
       UNION ALL
       SELECT r.i, 1 AS k, e.* FROM r CROSS JOIN LATERAL (
         SELECT stream, version, event_id, type, data::text AS data, causation_id, correlation_id, recorded_at,
           schema_version
         FROM ${t.events}
         WHERE stream = r.stream AND version > coalesce(r.snap_version, 0)
         ORDER BY version LIMIT r.lim) e
       ORDER BY 1, 2, 4`,
      [reads.map((r) => r.stream), reads.map((r) => sqlLimit(r.limit))],
    ),
  );
  const tails: SnapshotTail[] = reads.map(() => ({ snapshot: undefined, events: [] }));
  for (const row of result.rows) {
    const tail = tails[Number(row.i) - 1];
    if (!tail) continue;
    if (Number(row.k) === 0) {
      tail.snapshot = snapshotRecord({
        stream: row.stream,
        version: row.version,
        schema_version: row.schema_version,
        state: row.data,
        taken_at: row.recorded_at,
      });
    } else tail.events.push(eventRecord(row));
  }
  return tails;
}
