import type Database from "better-sqlite3";
import { type OperationRow, operationTable, SqlOperationStore } from "../effects/operations/sql-store.js";
import { BetterSqlite3 } from "./driver.js";

export interface SqliteOperationStoreOptions {
  /** A database file (opened with WAL), or an open better-sqlite3 database to share. */
  path?: string;
  database?: Database.Database;
  /** Table name (default `oncely_operations`). */
  table?: string;
}

/** The operation table (see `SqlOperationStore`) in a SQLite file. */
export function sqliteOperationStore(options: SqliteOperationStoreOptions): SqlOperationStore {
  if (!options.database && !options.path) throw new Error("sqliteOperationStore needs a path or a database");
  const table = operationTable(options.table);
  const owned = !options.database;
  const db = options.database ?? new BetterSqlite3(options.path as string);
  if (owned) {
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
  }
  return new SqlOperationStore(
    {
      backend: "sqlite",
      types: { json: "text", integer: "integer" },
      jsonParameter: "?",
      async run(sql, params) {
        return db.prepare(sql).run(...params).changes;
      },
      async get(sql, params) {
        return db.prepare(sql).get(...params) as OperationRow | undefined;
      },
      async close() {
        if (owned) db.close();
      },
    },
    table,
  );
}
