import type { DefiniteResult } from "../types.js";

/**
 * Provider-side idempotency for services we build ourselves (the seed's `payment_operations`):
 * one row per operation key, inserted with `ON CONFLICT DO NOTHING`. The inserter performs the
 * work; everyone else reads the stored outcome. Implementations: memory, SQLite, PostgreSQL; all
 * pass `test/effects/operations-suite.ts`.
 */

/** What the performer's work ended with, stored and replayed to every later request with the key. */
export type OperationOutcome<R = unknown> = DefiniteResult<R>;

export interface OperationRecord {
  key: string;
  /** sha256 of the canonical JSON of the request: same key + other request = a reused key. */
  requestHash: string;
  status: "processing" | "done";
  /** Fencing token of the current performer; a takeover replaces it, so a late completion is refused. */
  token: string;
  /** 1 for the first performer, +1 per takeover of a stale row. */
  attempt: number;
  outcome: OperationOutcome | null;
  /** When the current performer started (epoch ms, from the caller's clock). */
  startedAt: number;
  completedAt: number | null;
}

export interface NewOperation {
  key: string;
  requestHash: string;
  token: string;
  startedAt: number;
}

/** One statement per method. Times are passed in by the caller, never read from the database clock. */
export interface OperationStore {
  readonly backend: string;
  /** Create the table if absent. Idempotent. */
  migrate(): Promise<void>;
  /** `INSERT … ON CONFLICT DO NOTHING` as `processing`, attempt 1. True when this call inserted the row. */
  insertIfAbsent(operation: NewOperation): Promise<boolean>;
  get(key: string): Promise<OperationRecord | undefined>;
  /** Compare-and-set: a `processing` row still held by `expectedToken` gets `newToken`, attempt + 1, startedAt = now. */
  takeOver(key: string, expectedToken: string, newToken: string, now: number): Promise<boolean>;
  /** Store the outcome and mark `done`, only while `token` holds the row. */
  complete(key: string, token: string, outcome: OperationOutcome, now: number): Promise<boolean>;
  /** Delete a `processing` row held by `token` (its work did nothing and may start over). */
  release(key: string, token: string): Promise<boolean>;
  /** Delete `done` rows completed strictly before `before`; `processing` rows are never pruned. */
  prune(before: number): Promise<number>;
  close(): Promise<void>;
}

/** A table name we interpolate into SQL: letters, digits and underscores only. */
export function checkIdentifier(name: string, what: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new Error(`${what} must be a plain SQL identifier (letters, digits, _), got "${name}"`);
  }
  return name;
}
