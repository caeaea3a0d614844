import { InvalidInputError } from "../base/errors.js";
import type { DeadLetterRecord, OutboxCategory, OutboxRow, OutboxStatus } from "./types.js";

/**
 * The journal's queries for an operator's console: lists paginated by a cursor (keyset, never an
 * offset) and filtered by the store itself, with indexes on the SQL back ends, so that a page
 * costs the same on a journal of a thousand rows and of a million. Each back end implements this
 * role beside the rest of the `Journal`; `consoleQueriesConformance` checks they answer alike.
 */
export interface ConsoleQueries {
  /** Outbox rows, newest first (by `createdAt`, then `seq`). */
  pageOutbox(query: OutboxPageQuery): Promise<Page<OutboxRow>>;
  /** Dead letters, latest failure first (by `lastFailedAt`, then `id`). */
  pageDeadLetters(query: DeadLetterPageQuery): Promise<Page<DeadLetterRecord>>;
  /** How many dead letters match (for a bulk action's dry run). */
  countDeadLetters(filter: DeadLetterMatch): Promise<number>;
  /** Where every consumer stands: readers of the published log, and what each parked per source. */
  consumerPositions(): Promise<ConsumerPositions>;
}

/**
 * An effect's status as `effectView` (src/effects/view.ts) derives it from its row, said in row
 * terms so a store can filter on it: Unknown is `resolving`/`reconcile`, or `pending` with a
 * numeric `result.unknownSince`; Pending is the other `pending` rows; Completed is `done` with
 * outcome `completed` or `fired`; Failed is `dead` or any other `done`.
 */
export type EffectListStatus = "Pending" | "Unknown" | "Completed" | "Failed";
export const EFFECT_LIST_STATUSES: readonly EffectListStatus[] = ["Pending", "Unknown", "Completed", "Failed"];

export interface OutboxPageQuery {
  category: OutboxCategory;
  /** Rows in one of these statuses. */
  status?: readonly OutboxStatus[] | undefined;
  /** Effects (category `effect`) in this status as the effects view shows it. */
  effectStatus?: EffectListStatus | undefined;
  kind?: string | undefined;
  /** The owning actor's stream. */
  stream?: string | undefined;
  /** A substring (case-sensitive) of the row's id or its last error. */
  text?: string | undefined;
  /** Created at or after (epoch ms). */
  since?: number | undefined;
  /** Created strictly before (epoch ms). */
  until?: number | undefined;
  /** The `next` of the page before. */
  after?: string | undefined;
  /** Rows per page, 1 to `MAX_PAGE`. */
  limit: number;
}

export interface DeadLetterMatch {
  status?: DeadLetterRecord["status"] | undefined;
  consumer?: string | undefined;
  /** A substring (case-sensitive) of the error. */
  errorContains?: string | undefined;
  /** Last failed at or after (epoch ms). */
  since?: number | undefined;
  /** Last failed strictly before (epoch ms). */
  until?: number | undefined;
}

export interface DeadLetterPageQuery extends DeadLetterMatch {
  after?: string | undefined;
  limit: number;
}

export interface Page<T> {
  items: T[];
  /** The cursor of the next page, or null when this one is the last. */
  next: string | null;
}

export interface ConsumerPositions {
  /** The published log's highest position (0 when empty). */
  publishedHead: number;
  /** Each reader of the published log (a checkpoint under `PUBLISHED_READER_SOURCE`), by consumer. */
  readers: { consumer: string; position: number; updatedAt: number }[];
  /** Per consumer and source with parked messages: its checkpoint and what waits behind the gap. */
  parked: {
    consumer: string;
    source: string;
    checkpoint: number;
    count: number;
    firstParkedVersion: number;
    oldestParkedAt: number;
  }[];
}

/** Most rows one page holds: a page is for people, and a bound keeps every page one short read. */
export const MAX_PAGE = 500;

/** Outbox cursor: the last row's `(createdAt, seq)`. Dead-letter cursor: `(lastFailedAt, id)`. */
export type OutboxCursor = { at: number; seq: number };
export type DeadLetterCursor = { at: number; id: string };

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value), "utf8").toString("base64url");

function decode(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new InvalidInputError("invalid cursor", ["after: not a cursor this journal handed out"]);
  }
}

const badCursor = () => new InvalidInputError("invalid cursor", ["after: not a cursor this journal handed out"]);

export const outboxCursor = (row: OutboxRow): string => encode(["o", row.createdAt, row.seq]);
export const deadLetterCursor = (d: DeadLetterRecord): string => encode(["d", d.lastFailedAt, d.id]);

export function readOutboxCursor(cursor: string): OutboxCursor {
  const value = decode(cursor);
  if (!Array.isArray(value) || value[0] !== "o" || !Number.isSafeInteger(value[1]) || !Number.isSafeInteger(value[2]))
    throw badCursor();
  return { at: value[1], seq: value[2] };
}

export function readDeadLetterCursor(cursor: string): DeadLetterCursor {
  const value = decode(cursor);
  if (!Array.isArray(value) || value[0] !== "d" || !Number.isSafeInteger(value[1]) || typeof value[2] !== "string")
    throw badCursor();
  return { at: value[1], id: value[2] };
}

/** Refuses a limit outside 1..MAX_PAGE or a time range that is not epoch ms, naming the field. */
export function checkPageQuery(query: { limit: number; since?: number | undefined; until?: number | undefined }): void {
  const issues: string[] = [];
  if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE)
    issues.push(`limit: must be an integer from 1 to ${MAX_PAGE}`);
  for (const field of ["since", "until"] as const) {
    const value = query[field];
    if (value !== undefined && !Number.isSafeInteger(value)) issues.push(`${field}: must be epoch milliseconds`);
  }
  if (issues.length > 0) throw new InvalidInputError("invalid page query", issues);
}

/** A page from the rows of one more than the limit, read in page order. */
export function pageOf<T>(rows: T[], limit: number, cursor: (last: T) => string): Page<T> {
  if (rows.length <= limit) return { items: rows, next: null };
  const items = rows.slice(0, limit);
  return { items, next: cursor(items[items.length - 1] as T) };
}

/** The row statuses an effect status can have (the SQL back ends narrow with these first). */
export const EFFECT_ROW_STATUSES: Record<EffectListStatus, OutboxStatus[]> = {
  Pending: ["pending"],
  Unknown: ["pending", "resolving", "reconcile"],
  Completed: ["done"],
  Failed: ["done", "dead"],
};

/** The status the effects view shows for a row (see `EffectListStatus`). */
export function effectListStatus(row: OutboxRow): EffectListStatus {
  switch (row.status) {
    case "done":
      return row.outcome === "completed" || row.outcome === "fired" ? "Completed" : "Failed";
    case "dead":
      return "Failed";
    case "resolving":
    case "reconcile":
      return "Unknown";
    case "pending": {
      const since = (row.result as { unknownSince?: unknown } | null)?.unknownSince;
      return typeof since === "number" ? "Unknown" : "Pending";
    }
  }
}
