import type Database from "better-sqlite3";
import {
  checkIdentifier,
  type NewOperation,
  type OperationOutcome,
  type OperationRecord,
  type OperationStore,
} from "../effects/operations/types.js";
import { BetterSqlite3 } from "./driver.js";

export interface SqliteOperationStoreOptions {
  /** A database file (opened with WAL), or an open better-sqlite3 database to share. */
  path?: string;
  database?: Database.Database;
  /** Table name (default `oncely_operations`). */
  table?: string;
}

interface Row {
  operation_key: string;
  request_hash: string;
  status: "processing" | "done";
  token: string;
  attempt: number;
  outcome: string | null;
  started_at: number;
  completed_at: number | null;
}

/**
 * The operation table in SQLite: one statement per method, `INSERT … ON CONFLICT DO NOTHING`
 * for the race to perform, compare-and-set on the fencing token for takeover and completion.
 */
export class SqliteOperationStore implements OperationStore {
  readonly backend = "sqlite";
  private readonly db: Database.Database;
  private readonly owned: boolean;
  private readonly table: string;

  constructor(options: SqliteOperationStoreOptions) {
    if (!options.database && !options.path) throw new Error("sqliteOperationStore needs a path or a database");
    this.table = checkIdentifier(options.table ?? "oncely_operations", "table");
    this.owned = !options.database;
    this.db = options.database ?? new BetterSqlite3(options.path as string);
    if (this.owned) {
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("busy_timeout = 5000");
    }
  }

  async migrate(): Promise<void> {
    this.db.exec(`create table if not exists ${this.table} (
      operation_key text primary key,
      request_hash text not null,
      status text not null check (status in ('processing', 'done')),
      token text not null,
      attempt integer not null,
      outcome text,
      started_at integer not null,
      completed_at integer
    )`);
  }

  async insertIfAbsent(op: NewOperation): Promise<boolean> {
    const info = this.db
      .prepare(
        `insert into ${this.table} (operation_key, request_hash, status, token, attempt, started_at)
         values (?, ?, 'processing', ?, 1, ?) on conflict (operation_key) do nothing`,
      )
      .run(op.key, op.requestHash, op.token, op.startedAt);
    return info.changes === 1;
  }

  async get(key: string): Promise<OperationRecord | undefined> {
    const row = this.db.prepare(`select * from ${this.table} where operation_key = ?`).get(key) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  async takeOver(key: string, expectedToken: string, newToken: string, now: number): Promise<boolean> {
    const info = this.db
      .prepare(
        `update ${this.table} set token = ?, attempt = attempt + 1, started_at = ?
         where operation_key = ? and status = 'processing' and token = ?`,
      )
      .run(newToken, now, key, expectedToken);
    return info.changes === 1;
  }

  async complete(key: string, token: string, outcome: OperationOutcome, now: number): Promise<boolean> {
    const info = this.db
      .prepare(
        `update ${this.table} set status = 'done', outcome = ?, completed_at = ?
         where operation_key = ? and status = 'processing' and token = ?`,
      )
      .run(JSON.stringify(outcome), now, key, token);
    return info.changes === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    const info = this.db
      .prepare(`delete from ${this.table} where operation_key = ? and status = 'processing' and token = ?`)
      .run(key, token);
    return info.changes === 1;
  }

  async prune(before: number): Promise<number> {
    return this.db.prepare(`delete from ${this.table} where status = 'done' and completed_at < ?`).run(before).changes;
  }

  async close(): Promise<void> {
    if (this.owned) this.db.close();
  }
}

function toRecord(row: Row): OperationRecord {
  return {
    key: row.operation_key,
    requestHash: row.request_hash,
    status: row.status,
    token: row.token,
    attempt: row.attempt,
    outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as OperationOutcome),
    startedAt: row.started_at,
    completedAt: row.completed_at,
  };
}

export const sqliteOperationStore = (options: SqliteOperationStoreOptions): SqliteOperationStore =>
  new SqliteOperationStore(options);
