import { documentRecord } from "../journal/sql-rows.js";
import type { DocumentRecord } from "../journal/types.js";
import { DOCUMENT_COLUMNS } from "./columns.js";
import type { Queryable } from "./sql.js";
import { sqlLimit } from "./streams.js";
import type { Tables } from "./tables.js";

export async function getDocument(
  q: Queryable,
  t: Tables,
  collection: string,
  id: string,
): Promise<DocumentRecord | undefined> {
  const result = await q.query(`SELECT ${DOCUMENT_COLUMNS} FROM ${t.documents} WHERE collection = $1 AND id = $2`, [
    collection,
    id,
  ]);
  return result.rows[0] ? documentRecord(result.rows[0]) : undefined;
}

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
