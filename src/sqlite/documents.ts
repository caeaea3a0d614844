import { documentRecord } from "../journal/sql-rows.js";
import type { DocumentRecord } from "../journal/types.js";
import { type Sql, sqliteLimit } from "./sql.js";

export function getDocument(sql: Sql, collection: string, id: string): DocumentRecord | undefined {
  const row = sql.stmt("SELECT * FROM documents WHERE collection = ? AND id = ?").get(collection, id);
  return row ? documentRecord(row) : undefined;
}

export function listDocuments(sql: Sql, collection: string, limit: number): DocumentRecord[] {
  const max = sqliteLimit(limit);
  return sql
    .stmt("SELECT * FROM documents WHERE collection = ? ORDER BY id LIMIT ?")
    .all(collection, max)
    .map(documentRecord);
}
