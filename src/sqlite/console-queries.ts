import {
  type ConsumerPositions,
  checkPageQuery,
  type DeadLetterMatch,
  type DeadLetterPageQuery,
  deadLetterCursor,
  EFFECT_ROW_STATUSES,
  type OutboxPageQuery,
  outboxCursor,
  type Page,
  pageOf,
  readDeadLetterCursor,
  readOutboxCursor,
} from "../journal/console-queries.js";
import { PUBLISHED_READER_SOURCE } from "../journal/published.js";
import { deadLetterRecord, outboxRow } from "../journal/sql-rows.js";
import type { DeadLetterRecord, OutboxRow } from "../journal/types.js";
import type { Sql } from "./sql.js";

/**
 * The console's pages, as SQL written for the filters given (a condition for an absent filter
 * would keep SQLite from choosing the index that filter needs). Each page reads at most limit + 1
 * rows in index order (migration 5's indexes end with the sort key, `created_at, seq` or
 * `last_failed_at, id`), and goes on from the cursor with a row-value comparison, which SQLite
 * turns into a range of that index. A kind has no index of its own (migration 7): it is checked
 * while walking the page's creation-order index. The plans: test/journal/sqlite-console-plan.int.test.ts.
 */

/** An effect status's extra condition beyond its row statuses (see `EffectListStatus`). */
const UNKNOWN_SINCE = "coalesce(json_type(result, '$.unknownSince'), '') IN ('integer', 'real')";
const EFFECT_CONDITION = {
  // Among unfinished rows only (the caller says so): one CASE instead of an OR of statuses, so the
  // planner walks the open-rows index in page order rather than gathering every open row to sort.
  Pending: `CASE status WHEN 'pending' THEN NOT (${UNKNOWN_SINCE}) ELSE false END`,
  Unknown: `CASE status WHEN 'pending' THEN ${UNKNOWN_SINCE} ELSE true END`,
  Completed: "status = 'done' AND outcome IN ('completed', 'fired')",
  Failed: "(status = 'dead' OR (status = 'done' AND (outcome IS NULL OR outcome NOT IN ('completed', 'fired'))))",
} as const;

export function pageOutbox(sql: Sql, q: OutboxPageQuery): Page<OutboxRow> {
  const statement = outboxPageStatement(q);
  if (!statement) return { items: [], next: null };
  const rows = sql.stmt(statement.text).all(statement.params).map(outboxRow);
  return pageOf(rows, q.limit, outboxCursor);
}

/**
 * The statement of an outbox page (exported for its plan test), or undefined when the filters
 * allow no row status at all.
 */
export function outboxPageStatement(q: OutboxPageQuery): { text: string; params: Record<string, unknown> } | undefined {
  checkPageQuery(q);
  const where = ["category = @category"];
  const params: Record<string, unknown> = { category: q.category, limit: q.limit + 1 };
  const statuses = q.effectStatus === undefined ? q.status : EFFECT_ROW_STATUSES[q.effectStatus];
  if (statuses !== undefined) {
    const allowed = q.status === undefined ? statuses : statuses.filter((s) => q.status?.includes(s));
    if (allowed.length === 0) return undefined;
    const open = allowed.every((s) => s !== "done" && s !== "dead");
    // Pending and Unknown say their statuses in their CASE (see EFFECT_CONDITION).
    // Among unfinished rows, `+status` keeps SQLite from gathering them through the claim index
    // (status, not_before) and sorting: it walks the open-rows index in page order instead.
    if (!(open && q.status === undefined))
      where.push(`${open ? "+" : ""}status IN (${allowed.map((s) => `'${s}'`).join(", ")})`);
    // Said in the partial index's own words, which is how SQLite lets it serve.
    if (open) where.push("status NOT IN ('done', 'dead')");
  }
  if (q.effectStatus !== undefined) where.push(EFFECT_CONDITION[q.effectStatus]);
  if (q.kind !== undefined) {
    where.push("kind = @kind");
    params.kind = q.kind;
  }
  if (q.stream !== undefined) {
    where.push("stream = @stream");
    params.stream = q.stream;
  }
  if (q.text !== undefined) {
    where.push("(instr(id, @text) > 0 OR instr(coalesce(last_error, ''), @text) > 0)");
    params.text = q.text;
  }
  if (q.since !== undefined) {
    where.push("created_at >= @since");
    params.since = q.since;
  }
  if (q.until !== undefined) {
    where.push("created_at < @until");
    params.until = q.until;
  }
  if (q.after !== undefined) {
    const after = readOutboxCursor(q.after);
    where.push("(created_at, seq) < (@afterAt, @afterSeq)");
    params.afterAt = after.at;
    params.afterSeq = after.seq;
  }
  return {
    text: `SELECT * FROM outbox WHERE ${where.join(" AND ")} ORDER BY created_at DESC, seq DESC LIMIT @limit`,
    params,
  };
}

function deadLetterWhere(m: DeadLetterMatch, params: Record<string, unknown>): string[] {
  const where: string[] = [];
  if (m.status !== undefined) {
    where.push("status = @status");
    params.status = m.status;
  }
  if (m.consumer !== undefined) {
    where.push("consumer = @consumer");
    params.consumer = m.consumer;
  }
  if (m.errorContains !== undefined) {
    where.push("instr(error, @errorContains) > 0");
    params.errorContains = m.errorContains;
  }
  if (m.since !== undefined) {
    where.push("last_failed_at >= @since");
    params.since = m.since;
  }
  if (m.until !== undefined) {
    where.push("last_failed_at < @until");
    params.until = m.until;
  }
  return where;
}

export function pageDeadLetters(sql: Sql, q: DeadLetterPageQuery): Page<DeadLetterRecord> {
  const statement = deadLetterPageStatement(q);
  const rows = sql.stmt(statement.text).all(statement.params).map(deadLetterRecord);
  return pageOf(rows, q.limit, deadLetterCursor);
}

/** The statement of a dead-letter page (exported for its plan test). */
export function deadLetterPageStatement(q: DeadLetterPageQuery): { text: string; params: Record<string, unknown> } {
  checkPageQuery(q);
  const params: Record<string, unknown> = { limit: q.limit + 1 };
  const where = deadLetterWhere(q, params);
  if (q.after !== undefined) {
    const after = readDeadLetterCursor(q.after);
    where.push("(last_failed_at, id) < (@afterAt, @afterId)");
    params.afterAt = after.at;
    params.afterId = after.id;
  }
  return {
    text: `SELECT * FROM dead_letters ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY last_failed_at DESC, id DESC LIMIT @limit`,
    params,
  };
}

export function countDeadLetters(sql: Sql, m: DeadLetterMatch): number {
  const params: Record<string, unknown> = {};
  const where = deadLetterWhere(m, params);
  const row = sql
    .stmt(`SELECT count(*) AS n FROM dead_letters ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`)
    .get(params) as { n: number };
  return Number(row.n);
}

export function consumerPositions(sql: Sql): ConsumerPositions {
  const head = sql.stmt("SELECT coalesce(max(position), 0) AS head FROM published").get() as { head: number };
  const readers = sql
    .stmt("SELECT consumer, version, updated_at FROM checkpoints WHERE source = ? ORDER BY consumer")
    .all(PUBLISHED_READER_SOURCE) as { consumer: string; version: number; updated_at: number }[];
  const parked = sql
    .stmt(
      `SELECT p.consumer, p.source, count(*) AS n, min(p.version) AS first, min(p.parked_at) AS oldest,
         coalesce((SELECT c.version FROM checkpoints c WHERE c.consumer = p.consumer AND c.source = p.source), 0) AS checkpoint
       FROM parked p GROUP BY p.consumer, p.source ORDER BY p.consumer, p.source`,
    )
    .all() as { consumer: string; source: string; n: number; first: number; oldest: number; checkpoint: number }[];
  return {
    publishedHead: Number(head.head),
    readers: readers.map((r) => ({
      consumer: r.consumer,
      position: Number(r.version),
      updatedAt: Number(r.updated_at),
    })),
    parked: parked.map((p) => ({
      consumer: p.consumer,
      source: p.source,
      checkpoint: Number(p.checkpoint),
      count: Number(p.n),
      firstParkedVersion: Number(p.first),
      oldestParkedAt: Number(p.oldest),
    })),
  };
}
