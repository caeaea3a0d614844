import {
  checkIdentifier,
  type NewOperation,
  type OperationOutcome,
  type OperationRecord,
  type OperationStore,
} from "./types.js";

/**
 * What the operation table needs of a SQL database: statements are written once, with `?` for
 * each parameter (a dialect that numbers them rewrites them), and the two column types that differ.
 */
export interface OperationSql {
  readonly backend: string;
  /** Column types: a JSON document (`jsonb`, `text`) and an epoch-ms integer (`bigint`, `integer`). */
  readonly types: { json: string; integer: string };
  /** How a JSON text parameter is written into the JSON column (`?::jsonb`, `?`). */
  readonly jsonParameter: string;
  /** Run a statement; answers how many rows it changed. */
  run(sql: string, params: readonly unknown[]): Promise<number>;
  /** The first row of a query, or undefined. */
  get(sql: string, params: readonly unknown[]): Promise<OperationRow | undefined>;
  /** Release what the store opened (a pool or a file it was not given). */
  close(): Promise<void>;
}

/** A row as a driver returns it: PostgreSQL gives bigint as text and jsonb parsed, SQLite numbers and JSON text. */
export interface OperationRow {
  operation_key: string;
  request_hash: string;
  status: "processing" | "done";
  token: string;
  attempt: number;
  outcome: OperationOutcome | string | null;
  started_at: number | string;
  completed_at: number | string | null;
}

/**
 * The operation table over SQL (the seed's `payment_operations`): each method is one statement, so
 * concurrent requests race only on the primary key (`ON CONFLICT DO NOTHING`) and on the fencing
 * token (compare-and-set): no explicit transaction, no lock held while the work runs. The same
 * statements serve SQLite and PostgreSQL (`sqliteOperationStore`, `postgresOperationStore`).
 */
export class SqlOperationStore implements OperationStore {
  readonly backend: string;
  private readonly table: string;

  /** `table` is already checked and quoted where needed (a schema-qualified name on PostgreSQL). */
  constructor(
    private readonly sql: OperationSql,
    table: string,
  ) {
    this.backend = sql.backend;
    this.table = table;
  }

  async migrate(): Promise<void> {
    const { json, integer } = this.sql.types;
    await this.sql.run(
      `create table if not exists ${this.table} (
      operation_key text primary key,
      request_hash text not null,
      status text not null check (status in ('processing', 'done')),
      token text not null,
      attempt integer not null,
      outcome ${json},
      started_at ${integer} not null,
      completed_at ${integer}
    )`,
      [],
    );
  }

  async insertIfAbsent(op: NewOperation): Promise<boolean> {
    const changed = await this.sql.run(
      `insert into ${this.table} (operation_key, request_hash, status, token, attempt, started_at)
       values (?, ?, 'processing', ?, 1, ?) on conflict (operation_key) do nothing`,
      [op.key, op.requestHash, op.token, op.startedAt],
    );
    return changed === 1;
  }

  async get(key: string): Promise<OperationRecord | undefined> {
    const row = await this.sql.get(`select * from ${this.table} where operation_key = ?`, [key]);
    return row ? toRecord(row) : undefined;
  }

  async takeOver(key: string, expectedToken: string, newToken: string, now: number): Promise<boolean> {
    const changed = await this.sql.run(
      `update ${this.table} set token = ?, attempt = attempt + 1, started_at = ?
       where operation_key = ? and status = 'processing' and token = ?`,
      [newToken, now, key, expectedToken],
    );
    return changed === 1;
  }

  async complete(key: string, token: string, outcome: OperationOutcome, now: number): Promise<boolean> {
    const changed = await this.sql.run(
      `update ${this.table} set status = 'done', outcome = ${this.sql.jsonParameter}, completed_at = ?
       where operation_key = ? and status = 'processing' and token = ?`,
      [JSON.stringify(outcome), now, key, token],
    );
    return changed === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    const changed = await this.sql.run(
      `delete from ${this.table} where operation_key = ? and status = 'processing' and token = ?`,
      [key, token],
    );
    return changed === 1;
  }

  prune(before: number): Promise<number> {
    return this.sql.run(`delete from ${this.table} where status = 'done' and completed_at < ?`, [before]);
  }

  close(): Promise<void> {
    return this.sql.close();
  }
}

/** The table name checked as a plain identifier; `schema` qualifies it (PostgreSQL). */
export function operationTable(table: string | undefined, schema?: string): string {
  const name = checkIdentifier(table ?? "oncely_operations", "table");
  return schema === undefined ? name : `"${checkIdentifier(schema, "schema")}"."${name}"`;
}

function toRecord(row: OperationRow): OperationRecord {
  return {
    key: row.operation_key,
    requestHash: row.request_hash,
    status: row.status,
    token: row.token,
    attempt: row.attempt,
    outcome: typeof row.outcome === "string" ? (JSON.parse(row.outcome) as OperationOutcome) : row.outcome,
    startedAt: Number(row.started_at),
    completedAt: row.completed_at === null ? null : Number(row.completed_at),
  };
}
