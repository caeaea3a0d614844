import { encodedOutboxRow } from "./encode.js";
import type { ClaimOptions, NewOutboxRow, OutboxFilter, OutboxRow, OutboxUpdate } from "./types.js";

/** Shared by every back end: the same rules for what is claimable and how an update applies. */

/** Deep copy through JSON, as a store would serialize. Throws on values JSON cannot hold. */
export function copy<T>(value: T): T {
  if (value === undefined) return value;
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * The row as stored: its payload and result are fresh copies, as a store's round trip gives them.
 * When the row's commit already encoded them (every journal encodes a commit first), that text is
 * parsed instead of encoding the values again: JSON.parse(json(v)) equals copy(v) for any value
 * but undefined, which `json` stores as null (kept as undefined here).
 */
export function newOutboxRow(row: NewOutboxRow, now: number, seq: number): OutboxRow {
  const lease = row.lease;
  const encoded = encodedOutboxRow(row);
  // The fields named one by one, as a store's columns are: an object rest (`{ lease, ...fields }`)
  // is a slow generic copy in V8, and a store keeps no other property either.
  return {
    id: row.id,
    category: row.category,
    kind: row.kind,
    stream: row.stream,
    notBefore: row.notBefore,
    payload: encoded && row.payload !== undefined ? JSON.parse(encoded.payload) : copy(row.payload),
    status: "pending",
    attempts: lease?.attempts ?? 0,
    leaseOwner: lease?.owner ?? null,
    leaseUntil: lease?.until ?? null,
    lastError: null,
    outcome: null,
    result: lease?.result === undefined ? null : encoded ? JSON.parse(encoded.result) : copy(lease.result),
    createdAt: now,
    updatedAt: now,
    seq,
  };
}

/**
 * Whether a claim can take no effect row. Then an SQL back end's stream-order probe says so in
 * words (`category <> 'effect'`), which change nothing it answers (the probe compares categories,
 * and these hold no effect) but let the planner prove that the stream-order index, which holds no
 * effect rows, applies (PostgreSQL and SQLite migration 13).
 */
export const takesNoEffects = (o: ClaimOptions): boolean =>
  o.categories !== undefined && o.categories.length > 0 && !o.categories.includes("effect");

/** A finished row (done or dead) is never claimed, whatever statuses a claim asks for. */
export const isFinished = (status: OutboxRow["status"]): boolean => status === "done" || status === "dead";

export function claimable(row: OutboxRow, options: ClaimOptions): boolean {
  const statuses = options.statuses ?? ["pending"];
  if (!statuses.includes(row.status) || isFinished(row.status)) return false;
  if (options.categories && !options.categories.includes(row.category)) return false;
  if (row.notBefore > options.now) return false;
  return row.leaseUntil === null || row.leaseUntil <= options.now;
}

export function applyOutboxUpdate(row: OutboxRow, update: OutboxUpdate, now: number): void {
  if (update.status !== undefined) row.status = update.status;
  if (update.attempts !== undefined) row.attempts = update.attempts;
  if (update.notBefore !== undefined) row.notBefore = update.notBefore;
  if (update.lastError !== undefined) row.lastError = update.lastError;
  if (update.outcome !== undefined) row.outcome = update.outcome;
  if (update.result !== undefined) row.result = copy(update.result);
  if (update.releaseLease ?? true) {
    row.leaseOwner = null;
    row.leaseUntil = null;
  }
  row.updatedAt = now;
}

export function matchesOutboxFilter(row: OutboxRow, filter: OutboxFilter): boolean {
  if (filter.status !== undefined) {
    const statuses = Array.isArray(filter.status) ? filter.status : [filter.status];
    if (!statuses.includes(row.status)) return false;
  }
  if (filter.category !== undefined && row.category !== filter.category) return false;
  if (filter.kind !== undefined && row.kind !== filter.kind) return false;
  if (filter.stream !== undefined && row.stream !== filter.stream) return false;
  return true;
}
