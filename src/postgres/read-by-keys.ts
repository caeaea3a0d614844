import { prepared } from "./prepared.js";
import type { Queryable } from "./sql.js";

/** The values a point read looks up, one per key column (inbox: consumer and message id; snapshots: stream). */
export type Key = readonly string[];

/** What a point read reads: a table, the columns it returns, its key columns, and the order of several rows per key. */
export interface PointRead {
  table: string;
  columns: string;
  /** One or more columns, matched with `=` against the key's values in the same order. */
  keys: readonly string[];
  /** The SQL type of each key column when not `text` (the values are sent as text and cast). */
  keyTypes?: readonly string[];
  /** A column of `columns` ordering the rows of one key (parked messages by version); none for a primary key. */
  orderBy?: string;
}

/**
 * The rows of a statement over `unnest(...) WITH ORDINALITY AS r(..., i)`, each decoded and put
 * with its request: `count` lists, in request order (`i` is 1-based).
 */
export function byRequest<T>(
  rows: readonly Record<string, unknown>[],
  count: number,
  decode: (row: Record<string, unknown>) => T,
): T[][] {
  const lists: T[][] = Array.from({ length: count }, () => []);
  for (const row of rows) lists[Number(row.i) - 1]?.push(decode(row));
  return lists;
}

/**
 * Many point reads of one kind in ONE statement, one index probe per key: the reads that arrive
 * together (the parked messages of several sources, the snapshots of actors waking together, the
 * versions of several streams, outbox rows forwarders wait on) cost one round trip, and one parse
 * and plan per connection (a prepared statement), instead of one each. Rows come back grouped by
 * key, in the order of `keys`. Consumer state (inbox rows, checkpoints, documents, a parked version)
 * goes with `readState`'s reads instead, every kind in one statement (read-state.ts).
 */
export async function readByKeys(
  q: Queryable,
  read: PointRead,
  keys: readonly Key[],
): Promise<Record<string, unknown>[][]> {
  const params = read.keys.map((_, column) => `$${column + 1}::${read.keyTypes?.[column] ?? "text"}[]`).join(", ");
  const names = read.keys.map((_, column) => `k${column}`).join(", ");
  const match = read.keys.map((name, column) => `${name} = r.k${column}`).join(" AND ");
  const order = read.orderBy === undefined ? "" : ` ORDER BY ${read.orderBy}`;
  const result = await q.query(
    prepared(
      `SELECT r.i, x.* FROM unnest(${params}) WITH ORDINALITY AS r(${names}, i)
       CROSS JOIN LATERAL (SELECT ${read.columns} FROM ${read.table} WHERE ${match}${order}) x
       ORDER BY r.i${read.orderBy === undefined ? "" : `, x.${read.orderBy}`}`,
      read.keys.map((_, column) => keys.map((key) => key[column])),
    ),
  );
  return byRequest(result.rows, keys.length, (row) => row);
}
