import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { OutboxPageQuery } from "../src/journal/console-queries.js";
import type { Journal } from "../src/journal/types.js";
import { postgresJournal } from "../src/postgres/index.js";
import { sqliteJournal } from "../src/sqlite/index.js";

/**
 * A page of the console's effects list on a journal of 1,000,000 outbox rows (SQLite and
 * PostgreSQL), filled with one set-based INSERT each: 98% done (completed, some failed), 1%
 * pending, 0.5% Unknown (resolving), 0.5% in the reconciliation queue, ten kinds, 100,000 owners,
 * one row a second of creation time. Each query runs 20 times; the median and the slowest are printed.
 *
 *   npx tsx bench/console-pages.ts [rows]        (ONCELY_BENCH_PG_URL for another PostgreSQL)
 */

const ROWS = Number(process.argv[2] ?? 1_000_000);
const T0 = 1_700_000_000_000;
const PAGE = 200;

/** Row i's columns, as SQL expressions of `i` (the same words in both dialects). */
const COLUMNS = {
  id: "'order:o-' || i || ':payment'",
  category: "'effect'",
  kind: "'kind-' || (i % 10)",
  stream: "'order/o-' || (i % 100000)",
  payload: "'{\"input\":{}}'",
  status:
    "CASE WHEN i % 200 = 0 THEN 'resolving' WHEN i % 200 = 1 THEN 'reconcile' WHEN i % 100 IN (2, 3) THEN 'pending' WHEN i % 100 = 4 THEN 'pending' ELSE 'done' END",
  attempts: "1",
  not_before: `${T0} + i * 1000`,
  last_error: "CASE WHEN i % 97 = 0 THEN 'provider timed out after ' || i || ' ms' ELSE NULL END",
  outcome:
    "CASE WHEN i % 200 > 4 AND i % 100 > 4 THEN (CASE WHEN i % 50 = 7 THEN 'failed' ELSE 'completed' END) ELSE NULL END",
  result: "CASE WHEN i % 200 IN (0, 1) THEN '{\"unknownSince\":1}' ELSE '{}' END",
  created_at: `${T0} + i * 1000`,
  updated_at: `${T0} + i * 1000`,
  // The slice of the row's actor among 64 (src/journal/outbox-slice.ts); the pages do not read it.
  slice: "i % 64",
};

const QUERIES: [string, Omit<OutboxPageQuery, "limit" | "category">][] = [
  ["newest page", {}],
  ["Unknown", { effectStatus: "Unknown" }],
  ["Pending", { effectStatus: "Pending" }],
  ["Failed", { effectStatus: "Failed" }],
  ["kind", { kind: "kind-3" }],
  ["owner", { stream: "order/o-4242" }],
  ["time range (a day, mid-table)", { since: T0 + 500_000_000, until: T0 + 586_400_000 }],
  ["reconciliation queue", { status: ["reconcile"] }],
];

async function measure(name: string, journal: Journal, print: (line: string) => void): Promise<void> {
  for (const [label, q] of QUERIES) {
    const query: OutboxPageQuery = { ...q, category: "effect", limit: PAGE };
    await journal.pageOutbox(query); // warm: statement prepared, pages cached
    const times: number[] = [];
    let next: string | null = null;
    for (let i = 0; i < 20; i++) {
      const start = performance.now();
      const page = await journal.pageOutbox(query);
      times.push(performance.now() - start);
      next = page.next;
    }
    const second = next ? await time(() => journal.pageOutbox({ ...query, after: next ?? undefined })) : Number.NaN;
    times.sort((a, b) => a - b);
    print(
      `${name}: ${label.padEnd(30)} median ${fmt(times[10] ?? 0)} ms, slowest ${fmt(times[19] ?? 0)} ms, next page ${fmt(second)} ms`,
    );
  }
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

const fmt = (ms: number) => ms.toFixed(1).padStart(6);

async function main(): Promise<void> {
  const print = (line: string) => console.log(line);
  print(`console pages: ${ROWS} outbox rows, pages of ${PAGE}`);
  const dir = mkdtempSync(join(tmpdir(), "oncely-console-bench-"));
  const path = join(dir, "bench.db");
  const sqlite = sqliteJournal({ path });
  try {
    await sqlite.migrate();
    const fill = performance.now();
    const db = new Database(path);
    db.exec(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
       INSERT INTO outbox (seq, ${Object.keys(COLUMNS).join(", ")}) SELECT i, ${Object.values(COLUMNS).join(", ")} FROM n`,
    );
    db.exec("ANALYZE");
    db.close();
    print(`sqlite: filled in ${((performance.now() - fill) / 1000).toFixed(1)} s`);
    await measure("sqlite", sqlite, print);
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const url = process.env.ONCELY_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const schema = `bench_console_${process.pid}`;
  const journal = postgresJournal({ connectionString: url, schema, max: 4 });
  try {
    await journal.migrate();
    const fill = performance.now();
    const cols = Object.entries(COLUMNS).map(([name, sql]) =>
      name === "payload" || name === "result" ? `(${sql})::jsonb` : sql,
    );
    await admin.query(
      `INSERT INTO "${schema}".outbox (${Object.keys(COLUMNS).join(", ")})
       SELECT ${cols.join(", ")} FROM generate_series(1, ${ROWS}) AS i`,
    );
    await admin.query(`VACUUM ANALYZE "${schema}".outbox`);
    print(`postgres: filled in ${((performance.now() - fill) / 1000).toFixed(1)} s`);
    await measure("postgres", journal, print);
  } finally {
    await journal.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

await main();
