import {
  type ConsumerPositions,
  checkPageQuery,
  type DeadLetterMatch,
  type DeadLetterPageQuery,
  deadLetterCursor,
  effectListStatus,
  type OutboxPageQuery,
  outboxCursor,
  type Page,
  pageOf,
  readDeadLetterCursor,
  readOutboxCursor,
} from "./console-queries.js";
import { PUBLISHED_READER_SOURCE } from "./published.js";
import type { DeadLetterRecord, OutboxRow, ParkedRecord } from "./types.js";

/** The in-memory journal's `ConsoleQueries`, over its rows as they are (the caller copies what it returns). */

const newestFirst = (a: OutboxRow, b: OutboxRow) => b.createdAt - a.createdAt || b.seq - a.seq;

export function pageOutboxRows(rows: Iterable<OutboxRow>, q: OutboxPageQuery): Page<OutboxRow> {
  checkPageQuery(q);
  const after = q.after === undefined ? undefined : readOutboxCursor(q.after);
  const matches: OutboxRow[] = [];
  for (const row of rows) {
    if (row.category !== q.category) continue;
    if (q.status !== undefined && !q.status.includes(row.status)) continue;
    if (q.effectStatus !== undefined && effectListStatus(row) !== q.effectStatus) continue;
    if (q.kind !== undefined && row.kind !== q.kind) continue;
    if (q.stream !== undefined && row.stream !== q.stream) continue;
    if (q.text !== undefined && !row.id.includes(q.text) && !(row.lastError ?? "").includes(q.text)) continue;
    if (q.since !== undefined && row.createdAt < q.since) continue;
    if (q.until !== undefined && row.createdAt >= q.until) continue;
    if (after && (row.createdAt > after.at || (row.createdAt === after.at && row.seq >= after.seq))) continue;
    matches.push(row);
  }
  return pageOf(matches.sort(newestFirst).slice(0, q.limit + 1), q.limit, outboxCursor);
}

export function matchesDeadLetter(d: DeadLetterRecord, m: DeadLetterMatch): boolean {
  return (
    (m.status === undefined || d.status === m.status) &&
    (m.consumer === undefined || d.consumer === m.consumer) &&
    (m.errorContains === undefined || d.error.includes(m.errorContains)) &&
    (m.since === undefined || d.lastFailedAt >= m.since) &&
    (m.until === undefined || d.lastFailedAt < m.until)
  );
}

export function pageDeadLetterRecords(
  letters: Iterable<DeadLetterRecord>,
  q: DeadLetterPageQuery,
): Page<DeadLetterRecord> {
  checkPageQuery(q);
  const after = q.after === undefined ? undefined : readDeadLetterCursor(q.after);
  const matches = [...letters].filter(
    (d) =>
      matchesDeadLetter(d, q) &&
      (!after || d.lastFailedAt < after.at || (d.lastFailedAt === after.at && d.id < after.id)),
  );
  matches.sort((a, b) => b.lastFailedAt - a.lastFailedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return pageOf(matches.slice(0, q.limit + 1), q.limit, deadLetterCursor);
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function consumerPositionsOf(
  checkpoints: Iterable<{ consumer: string; source: string; version: number; updatedAt: number }>,
  parked: Iterable<ParkedRecord>,
  publishedHead: number,
): ConsumerPositions {
  const all = [...checkpoints];
  const readers = all
    .filter((c) => c.source === PUBLISHED_READER_SOURCE)
    .map((c) => ({ consumer: c.consumer, position: c.version, updatedAt: c.updatedAt }))
    .sort((a, b) => byText(a.consumer, b.consumer));
  const groups = new Map<string, ConsumerPositions["parked"][number]>();
  for (const p of parked) {
    const k = `${p.consumer}\u0000${p.source}`;
    const group = groups.get(k);
    if (group) {
      group.count++;
      group.firstParkedVersion = Math.min(group.firstParkedVersion, p.version);
      group.oldestParkedAt = Math.min(group.oldestParkedAt, p.parkedAt);
    } else {
      const checkpoint = all.find((c) => c.consumer === p.consumer && c.source === p.source)?.version ?? 0;
      groups.set(k, {
        consumer: p.consumer,
        source: p.source,
        checkpoint,
        count: 1,
        firstParkedVersion: p.version,
        oldestParkedAt: p.parkedAt,
      });
    }
  }
  const parkedList = [...groups.values()].sort((a, b) => byText(a.consumer, b.consumer) || byText(a.source, b.source));
  return { publishedHead, readers, parked: parkedList };
}
