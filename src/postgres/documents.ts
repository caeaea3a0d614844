import { documentRecord } from "../journal/sql-rows.js";
import type { DocumentRecord } from "../journal/types.js";
import { DOCUMENT_COLUMNS } from "./columns.js";
import type { Queryable } from "./sql.js";
import { sqlLimit } from "./streams.js";
import type { Tables } from "./tables.js";

export async function listDocuments(
  q: Queryable,
  t: Tables,
  collection: string,
  limit: number,
): Promise<DocumentRecord[]> {
  const result = await q.query(
    `SELECT ${DOCUMENT_COLUMNS} FROM ${t.documents} WHERE collection = $1 ORDER BY id LIMIT $2`,
    [collection, sqlLimit(limit)],
  );
  return result.rows.map(documentRecord);
}
