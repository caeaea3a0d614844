import type pg from "pg";
import { type OperationRow, operationTable, SqlOperationStore } from "../effects/operations/sql-store.js";
import { Pg } from "./driver.js";
import { guardPool } from "./sql.js";

export interface PostgresOperationStoreOptions {
  /** Connection string (a pool is created and closed by the store), or a pool to share. */
  connectionString?: string;
  pool?: pg.Pool;
  /** Schema (default `public`) and table (default `oncely_operations`). */
  schema?: string;
  table?: string;
}

/** `?` placeholders numbered as PostgreSQL wants them (the statements hold no other `?`). */
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** The operation table (see `SqlOperationStore`) in a PostgreSQL schema. */
export function postgresOperationStore(options: PostgresOperationStoreOptions): SqlOperationStore {
  if (!options.pool && !options.connectionString) {
    throw new Error("postgresOperationStore needs a connectionString or a pool");
  }
  const table = operationTable(options.table, options.schema ?? "public");
  const owned = !options.pool;
  const pool = guardPool(options.pool ?? new Pg.Pool({ connectionString: options.connectionString, max: 10 }), () => {
    // A lost connection fails the statement that used it; nothing else to do here.
  });
  return new SqlOperationStore(
    {
      backend: "postgres",
      types: { json: "jsonb", integer: "bigint" },
      jsonParameter: "?::jsonb",
      async run(sql, params) {
        return (await pool.query(numbered(sql), [...params])).rowCount ?? 0;
      },
      async get(sql, params) {
        return (await pool.query<OperationRow>(numbered(sql), [...params])).rows[0];
      },
      async close() {
        if (owned) await pool.end();
      },
    },
    table,
  );
}
