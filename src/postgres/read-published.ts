import { publishedRecord } from "../journal/sql-rows.js";
import type { PublishedRecord } from "../journal/types.js";
import { prepared } from "./prepared.js";
import { byRequest } from "./read-by-keys.js";
import type { Queryable } from "./sql.js";
import { sqlLimit } from "./streams.js";
import type { Tables } from "./tables.js";

/** One `readPublished` call: the entries after a position, at most `limit`. */
export interface PublishedRead {
  after: number;
  limit: number | undefined;
}

/**
 * Many pages of the published log in ONE statement: the readers of one process are woken by the
 * same append and read together (one per consumer), so they cost one round trip instead of one
 * each. Each page is what `readPublished` alone returns.
 */
export async function readPublishedPages(
  q: Queryable,
  t: Tables,
  reads: readonly PublishedRead[],
): Promise<PublishedRecord[][]> {
  const result = await q.query(
    prepared(
      `SELECT r.i, p.* FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS r(after, lim, i)
       CROSS JOIN LATERAL (SELECT * FROM ${t.published} WHERE position > r.after ORDER BY position LIMIT r.lim) p
       ORDER BY r.i, p.position`,
      [reads.map((r) => Math.floor(r.after)), reads.map((r) => sqlLimit(r.limit))],
    ),
  );
  return byRequest(result.rows, reads.length, publishedRecord);
}
