import { publishedRecord } from "../journal/sql-rows.js";
import type { PublishedRecord } from "../journal/types.js";
import { prepared } from "./prepared.js";
import { byRequest } from "./read-by-keys.js";
import type { Queryable } from "./sql.js";
import { sqlLimit } from "./streams.js";
import type { Tables } from "./tables.js";

/** One `readPublished` call: the entries after a position, at most `limit`, of `slices` when given. */
export interface PublishedRead {
  after: number;
  limit: number | undefined;
  slices?: readonly number[] | undefined;
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
  if (reads.every((r) => r.slices === undefined)) return readAllSlices(q, t, reads);
  // Reads of some slices take a statement of their own (its own plan: the slice index), the others
  // the statement above; each page goes back to its request.
  const pages: PublishedRecord[][] = reads.map(() => []);
  const whole = reads.flatMap((r, i) => (r.slices === undefined ? [i] : []));
  const sliced = reads.flatMap((r, i) => (r.slices !== undefined && r.slices.length > 0 ? [i] : []));
  const [wholePages, slicedPages] = await Promise.all([
    whole.length === 0
      ? []
      : readAllSlices(
          q,
          t,
          whole.map((i) => reads[i] as PublishedRead),
        ),
    sliced.length === 0
      ? []
      : readSomeSlices(
          q,
          t,
          sliced.map((i) => reads[i] as PublishedRead),
        ),
  ]);
  whole.forEach((at, k) => {
    pages[at] = wholePages[k] ?? [];
  });
  sliced.forEach((at, k) => {
    pages[at] = slicedPages[k] ?? [];
  });
  return pages;
}

/**
 * Pages of some slices each: `slice = ANY(...)`, which the index `published_slice (slice, position)`
 * can serve (schema 0004). Each read's slices travel as one comma-separated text, since an array
 * of arrays cannot be unnested row by row.
 */
async function readSomeSlices(q: Queryable, t: Tables, reads: readonly PublishedRead[]): Promise<PublishedRecord[][]> {
  const result = await q.query(
    prepared(
      `SELECT r.i, p.* FROM unnest($1::bigint[], $2::bigint[], $3::text[]) WITH ORDINALITY AS r(after, lim, slices, i)
       CROSS JOIN LATERAL (SELECT * FROM ${t.published}
         WHERE slice = ANY(string_to_array(r.slices, ',')::integer[]) AND position > r.after
         ORDER BY position LIMIT r.lim) p
       ORDER BY r.i, p.position`,
      [
        reads.map((r) => Math.floor(r.after)),
        reads.map((r) => sqlLimit(r.limit)),
        reads.map((r) => (r.slices ?? []).join(",")),
      ],
    ),
  );
  return byRequest(result.rows, reads.length, publishedRecord);
}

async function readAllSlices(q: Queryable, t: Tables, reads: readonly PublishedRead[]): Promise<PublishedRecord[][]> {
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
