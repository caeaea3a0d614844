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
import { DEAD_LETTER_COLUMNS, OUTBOX_COLUMNS } from "./columns.js";
import type { Queryable } from "./sql.js";
import type { Tables } from "./tables.js";

/**
 * The console's pages, as SQL written for the filters given (a `$1 IS NULL OR ...` condition
 * would make one generic plan that serves no filter's index). Each page reads rows in the order of
 * an index whose last columns are the sort key (`created_at, seq` or `last_failed_at, id`;
 * migrations 0003 and 0007), at most limit + 1 from each index it walks unless a filter is checked
 * while walking, and goes on from the cursor with a row comparison, which PostgreSQL turns into a
 * range of that index. Dead letters' ids sort in the
 * "C" collation, the same bytes order on every database whatever its locale.
 */

const UNKNOWN_SINCE = "coalesce(jsonb_typeof(result -> 'unknownSince'), '') = 'number'";
const EFFECT_CONDITION = {
  // Among unfinished rows only (the caller says so): one CASE instead of an OR of statuses, so the
  // planner walks the open-rows index in page order rather than gathering every open row to sort.
  Pending: `CASE status WHEN 'pending' THEN NOT (${UNKNOWN_SINCE}) ELSE false END`,
  Unknown: `CASE status WHEN 'pending' THEN ${UNKNOWN_SINCE} ELSE true END`,
  Completed: "status = 'done' AND outcome IN ('completed', 'fired')",
  Failed: "(status = 'dead' OR (status = 'done' AND (outcome IS NULL OR outcome NOT IN ('completed', 'fired'))))",
} as const;

/** Conditions with numbered parameters. */
class Where {
  readonly conditions: string[] = [];
  readonly values: unknown[] = [];
  add(condition: (...refs: string[]) => string, ...values: unknown[]): void {
    const refs = values.map((v) => {
      this.values.push(v);
      return `$${this.values.length}`;
    });
    this.conditions.push(condition(...refs));
  }
  literal(condition: string): void {
    this.conditions.push(condition);
  }
  get text(): string {
    return this.conditions.length ? `WHERE ${this.conditions.join(" AND ")}` : "";
  }
  next(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** Unfinished rows (outbox_page_open) and finished ones (outbox_page_finished), in those indexes' own words. */
const OPEN = "status NOT IN ('done', 'dead')";
const FINISHED = "status IN ('done', 'dead')";
const NEWEST_FIRST = "ORDER BY created_at DESC, seq DESC";

/**
 * The statement of one page (exported for the plan test), or undefined when no status can match.
 * Creation order is indexed in two halves (migration 0007): open rows and finished rows. A page
 * whose statuses lie in one half walks that half's index; one owner's rows walk their own index
 * (outbox_page_stream); any other page takes up to limit + 1 rows from each half, each read in
 * page order, and keeps the newest limit + 1 of the two.
 */
export function outboxPageStatement(
  t: Tables,
  query: OutboxPageQuery,
): { text: string; values: unknown[] } | undefined {
  checkPageQuery(query);
  const w = new Where();
  w.add((c) => `category = ${c}`, query.category);
  const statuses = query.effectStatus === undefined ? query.status : EFFECT_ROW_STATUSES[query.effectStatus];
  let half: string | undefined;
  if (statuses !== undefined) {
    const allowed = query.status === undefined ? statuses : statuses.filter((s) => query.status?.includes(s));
    if (allowed.length === 0) return undefined;
    const open = allowed.every((s) => s !== "done" && s !== "dead");
    const finished = allowed.every((s) => s === "done" || s === "dead");
    // Pending and Unknown say their statuses in their CASE (see EFFECT_CONDITION).
    if (!(open && query.status === undefined)) w.literal(`status IN (${allowed.map((s) => `'${s}'`).join(", ")})`);
    // Said in the partial index's own words, so the planner need not prove it.
    half = open ? OPEN : finished ? FINISHED : undefined;
  }
  if (query.effectStatus !== undefined) w.literal(EFFECT_CONDITION[query.effectStatus]);
  if (query.kind !== undefined) w.add((k) => `kind = ${k}`, query.kind);
  if (query.stream !== undefined) w.add((s) => `stream = ${s}`, query.stream);
  if (query.text !== undefined)
    w.add((x) => `(strpos(id, ${x}) > 0 OR strpos(coalesce(last_error, ''), ${x}) > 0)`, query.text);
  if (query.since !== undefined) w.add((s) => `created_at >= ${s}`, query.since);
  if (query.until !== undefined) w.add((u) => `created_at < ${u}`, query.until);
  if (query.after !== undefined) {
    const after = readOutboxCursor(query.after);
    w.add((a, s) => `(created_at, seq) < (${a}, ${s})`, after.at, after.seq);
  }
  const limit = w.next(query.limit + 1);
  const select = (where: string) => `SELECT ${OUTBOX_COLUMNS} FROM ${t.outbox} ${where} ${NEWEST_FIRST} LIMIT ${limit}`;
  const and = (extra: string) => `WHERE ${[...w.conditions, extra].join(" AND ")}`;
  if (half !== undefined) return { text: select(and(half)), values: w.values };
  if (query.stream !== undefined) return { text: select(w.text), values: w.values };
  return {
    text: `SELECT * FROM ((${select(and(OPEN))}) UNION ALL (${select(and(FINISHED))})) AS page ${NEWEST_FIRST} LIMIT ${limit}`,
    values: w.values,
  };
}

export async function pageOutbox(q: Queryable, t: Tables, query: OutboxPageQuery): Promise<Page<OutboxRow>> {
  const statement = outboxPageStatement(t, query);
  if (statement === undefined) return { items: [], next: null };
  const result = await q.query(statement.text, statement.values);
  return pageOf(result.rows.map(outboxRow), query.limit, outboxCursor);
}

function deadLetterWhere(m: DeadLetterMatch): Where {
  const w = new Where();
  if (m.status !== undefined) w.add((s) => `status = ${s}`, m.status);
  if (m.consumer !== undefined) w.add((c) => `consumer = ${c}`, m.consumer);
  if (m.errorContains !== undefined) w.add((e) => `strpos(error, ${e}) > 0`, m.errorContains);
  if (m.since !== undefined) w.add((s) => `last_failed_at >= ${s}`, m.since);
  if (m.until !== undefined) w.add((u) => `last_failed_at < ${u}`, m.until);
  return w;
}

export async function pageDeadLetters(
  q: Queryable,
  t: Tables,
  query: DeadLetterPageQuery,
): Promise<Page<DeadLetterRecord>> {
  checkPageQuery(query);
  const w = deadLetterWhere(query);
  if (query.after !== undefined) {
    const after = readDeadLetterCursor(query.after);
    w.add((a, i) => `(last_failed_at, id COLLATE "C") < (${a}, ${i})`, after.at, after.id);
  }
  const limit = w.next(query.limit + 1);
  const result = await q.query(
    `SELECT ${DEAD_LETTER_COLUMNS} FROM ${t.deadLetters} ${w.text}
     ORDER BY last_failed_at DESC, id COLLATE "C" DESC LIMIT ${limit}`,
    w.values,
  );
  return pageOf(result.rows.map(deadLetterRecord), query.limit, deadLetterCursor);
}

export async function countDeadLetters(q: Queryable, t: Tables, m: DeadLetterMatch): Promise<number> {
  const w = deadLetterWhere(m);
  const result = await q.query(`SELECT count(*) AS n FROM ${t.deadLetters} ${w.text}`, w.values);
  return Number(result.rows[0]?.n ?? 0);
}

export async function consumerPositions(q: Queryable, t: Tables): Promise<ConsumerPositions> {
  const head = await q.query(`SELECT coalesce(max(position), 0) AS head FROM ${t.published}`);
  const readers = await q.query(
    `SELECT consumer, version, updated_at FROM ${t.checkpoints} WHERE source = $1 ORDER BY consumer COLLATE "C"`,
    [PUBLISHED_READER_SOURCE],
  );
  const parked = await q.query(
    `SELECT p.consumer, p.source, count(*) AS n, min(p.version) AS first, min(p.parked_at) AS oldest,
       coalesce((SELECT c.version FROM ${t.checkpoints} c WHERE c.consumer = p.consumer AND c.source = p.source), 0) AS checkpoint
     FROM ${t.parked} p GROUP BY p.consumer, p.source ORDER BY p.consumer COLLATE "C", p.source COLLATE "C"`,
  );
  return {
    publishedHead: Number(head.rows[0]?.head ?? 0),
    readers: readers.rows.map((r) => ({
      consumer: r.consumer,
      position: Number(r.version),
      updatedAt: Number(r.updated_at),
    })),
    parked: parked.rows.map((p) => ({
      consumer: p.consumer,
      source: p.source,
      checkpoint: Number(p.checkpoint),
      count: Number(p.n),
      firstParkedVersion: Number(p.first),
      oldestParkedAt: Number(p.oldest),
    })),
  };
}
