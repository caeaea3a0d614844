import type { JournalSummary, OutboxCategory, OutboxStatus } from "./types.js";

/**
 * The three grouped reads behind `Journal.summarize`, for both SQL journals (same columns; only
 * the table names differ: PostgreSQL qualifies them with the schema). Each reads open rows only:
 * `status <> 'done'` and open dead letters, so a long history of finished rows costs nothing.
 */
export const summaryQueries = (t: { outbox: string; parked: string; deadLetters: string }) => ({
  outbox: `SELECT category, kind, status, COUNT(*) AS count, MIN(created_at) AS oldest FROM ${t.outbox}
    WHERE status <> 'done' GROUP BY category, kind, status ORDER BY category, kind, status`,
  parked: `SELECT consumer, COUNT(*) AS count, MIN(parked_at) AS oldest FROM ${t.parked}
    GROUP BY consumer ORDER BY consumer`,
  deadLetters: `SELECT consumer, COUNT(*) AS count, MIN(first_failed_at) AS oldest FROM ${t.deadLetters}
    WHERE status = 'open' GROUP BY consumer ORDER BY consumer`,
});

type Row = Record<string, unknown>;

/** Decode the rows of the three reads (PostgreSQL answers COUNT and bigint columns as strings). */
export function summaryFromRows(outbox: Row[], parked: Row[], deadLetters: Row[]): JournalSummary {
  return {
    outbox: outbox.map((r) => ({
      category: String(r.category) as OutboxCategory,
      kind: String(r.kind),
      status: String(r.status) as OutboxStatus,
      count: Number(r.count),
      oldestCreatedAt: Number(r.oldest),
    })),
    parked: parked.map((r) => ({
      consumer: String(r.consumer),
      count: Number(r.count),
      oldestParkedAt: Number(r.oldest),
    })),
    deadLetters: deadLetters.map((r) => ({
      consumer: String(r.consumer),
      count: Number(r.count),
      oldestFailedAt: Number(r.oldest),
    })),
  };
}
