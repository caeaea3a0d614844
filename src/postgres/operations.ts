import type pg from "pg";
import {
  checkIdentifier,
  type NewOperation,
  type OperationOutcome,
  type OperationRecord,
  type OperationStore,
} from "../effects/operations/types.js";
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

interface Row {
  operation_key: string;
  request_hash: string;
  status: "processing" | "done";
  token: string;
  attempt: number;
  outcome: OperationOutcome | null;
  started_at: string;
  completed_at: string | null;
}

/**
 * The operation table in PostgreSQL. Each method is one statement, so concurrent requests race
 * only on the primary key (`ON CONFLICT DO NOTHING`) and on the fencing token (compare-and-set):
 * no explicit transaction, no lock held while the work runs.
 */
export class PostgresOperationStore implements OperationStore {
  readonly backend = "postgres";
  private readonly pool: pg.Pool;
  private readonly owned: boolean;
  private readonly table: string;

  constructor(options: PostgresOperationStoreOptions) {
    if (!options.pool && !options.connectionString) {
      throw new Error("postgresOperationStore needs a connectionString or a pool");
    }
    const schema = checkIdentifier(options.schema ?? "public", "schema");
    this.table = `"${schema}"."${checkIdentifier(options.table ?? "oncely_operations", "table")}"`;
    this.owned = !options.pool;
    this.pool = guardPool(options.pool ?? new Pg.Pool({ connectionString: options.connectionString, max: 10 }), () => {
      // A lost connection fails the statement that used it; nothing else to do here.
    });
  }

  async migrate(): Promise<void> {
    await this.pool.query(`create table if not exists ${this.table} (
      operation_key text primary key,
      request_hash text not null,
      status text not null check (status in ('processing', 'done')),
      token text not null,
      attempt integer not null,
      outcome jsonb,
      started_at bigint not null,
      completed_at bigint
    )`);
  }

  async insertIfAbsent(op: NewOperation): Promise<boolean> {
    const result = await this.pool.query(
      `insert into ${this.table} (operation_key, request_hash, status, token, attempt, started_at)
       values ($1, $2, 'processing', $3, 1, $4) on conflict (operation_key) do nothing`,
      [op.key, op.requestHash, op.token, op.startedAt],
    );
    return result.rowCount === 1;
  }

  async get(key: string): Promise<OperationRecord | undefined> {
    const result = await this.pool.query<Row>(`select * from ${this.table} where operation_key = $1`, [key]);
    const row = result.rows[0];
    return row ? toRecord(row) : undefined;
  }

  async takeOver(key: string, expectedToken: string, newToken: string, now: number): Promise<boolean> {
    const result = await this.pool.query(
      `update ${this.table} set token = $1, attempt = attempt + 1, started_at = $2
       where operation_key = $3 and status = 'processing' and token = $4`,
      [newToken, now, key, expectedToken],
    );
    return result.rowCount === 1;
  }

  async complete(key: string, token: string, outcome: OperationOutcome, now: number): Promise<boolean> {
    const result = await this.pool.query(
      `update ${this.table} set status = 'done', outcome = $1::jsonb, completed_at = $2
       where operation_key = $3 and status = 'processing' and token = $4`,
      [JSON.stringify(outcome), now, key, token],
    );
    return result.rowCount === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    const result = await this.pool.query(
      `delete from ${this.table} where operation_key = $1 and status = 'processing' and token = $2`,
      [key, token],
    );
    return result.rowCount === 1;
  }

  async prune(before: number): Promise<number> {
    const result = await this.pool.query(`delete from ${this.table} where status = 'done' and completed_at < $1`, [
      before,
    ]);
    return result.rowCount ?? 0;
  }

  async close(): Promise<void> {
    if (this.owned) await this.pool.end();
  }
}

function toRecord(row: Row): OperationRecord {
  return {
    key: row.operation_key,
    requestHash: row.request_hash,
    status: row.status,
    token: row.token,
    attempt: row.attempt,
    outcome: row.outcome,
    startedAt: Number(row.started_at),
    completedAt: row.completed_at === null ? null : Number(row.completed_at),
  };
}

export const postgresOperationStore = (options: PostgresOperationStoreOptions): PostgresOperationStore =>
  new PostgresOperationStore(options);
