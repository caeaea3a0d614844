import { eventRecord } from "../journal/sql-rows.js";
import type { EventRecord } from "../journal/types.js";
import { EVENT_COLUMNS } from "./columns.js";
import { prepared } from "./prepared.js";
import { byRequest } from "./read-by-keys.js";
import type { Queryable } from "./sql.js";
import { sqlLimit } from "./streams.js";
import type { Tables } from "./tables.js";

/** One `readStream` call: a page of a stream from a version. */
export interface StreamRead {
  stream: string;
  fromVersion: number;
  limit: number;
}

/**
 * Many pages of many streams in ONE statement: the reads that actors starting together make (50
 * new orders in flight are 50 empty streams to read) cost one round trip instead of one each. On
 * this machine a round trip is the expensive part of a small read (a socket write and a wake-up on
 * each side), not the index probe. Each page is the same as `readStream` alone returns; rows come
 * back tagged with their request's index.
 */
export async function readStreams(q: Queryable, t: Tables, reads: readonly StreamRead[]): Promise<EventRecord[][]> {
  const result = await q.query(
    prepared(
      `SELECT r.i, e.* FROM unnest($1::text[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS r(stream, from_v, lim, i)
       CROSS JOIN LATERAL (
         SELECT ${EVENT_COLUMNS} FROM ${t.events}
         WHERE stream = r.stream AND version >= r.from_v AND (r.lim IS NULL OR version < r.from_v + r.lim)
         ORDER BY version LIMIT r.lim) e
       ORDER BY r.i, e.version`,
      [reads.map((r) => r.stream), reads.map((r) => Math.floor(r.fromVersion)), reads.map((r) => sqlLimit(r.limit))],
    ),
  );
  return byRequest(result.rows, reads.length, eventRecord);
}
