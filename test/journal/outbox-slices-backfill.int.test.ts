import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { sliceOf } from "../../src/core/slices.js";
import { outboxSlice } from "../../src/journal/outbox-slice.js";
import { bookkeepingSql } from "../../src/postgres/development-schema.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { migrations as pgMigrations } from "../../src/postgres/migrations.js";
import { fileSql } from "../../src/postgres/schema-files.js";
import { tables } from "../../src/postgres/tables.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { migrations as sqliteMigrations } from "../../src/sqlite/migrations.js";
import { freshPgSchema, PG_URL } from "../support/services.js";

/** Rows as a journal before slices stored them: an effect, a message to another actor, an event, odd streams. */
const OLD_ROWS = [
  { id: "r1", category: "effect", stream: "order/42", payload: { input: 1 }, status: "pending" },
  {
    id: "r2",
    category: "message",
    stream: "order/42",
    payload: { to: "payment/7", command: { type: "X" } },
    status: "pending",
  },
  { id: "r3", category: "event", stream: "shipment/注文-🧾", payload: {}, status: "resolving" },
  { id: "r4", category: "message", stream: "order/43", payload: { to: 5 }, status: "dead" },
  { id: "r5", category: "event", stream: "no-address", payload: {}, status: "pending" },
  { id: "r6", category: "effect", stream: "/leading", payload: {}, status: "pending" },
  { id: "r7", category: "effect", stream: "trailing/", payload: {}, status: "pending" },
] as const;

const expected = (count: number) =>
  Object.fromEntries(
    OLD_ROWS.map((r) => [r.id, outboxSlice({ category: r.category, stream: r.stream, payload: r.payload }, count)]),
  );

/**
 * Keys with every kind of text a store holds: ASCII, BMP, astral (surrogate pairs), empty. Not NUL
 * nor a lone surrogate, which no back end stores (a commit holding one is refused).
 */
const keys = fc
  .oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), fc.uuid())
  .filter((key) => !key.includes("\u0000") && !/\p{Surrogate}/u.test(key));

describe("outbox slices on PostgreSQL", () => {
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it("oncely_slice_of equals the TypeScript sliceOf on many keys and counts", async () => {
    const { schema, drop } = await freshPgSchema("slice_of");
    drops.push(drop);
    const journal = postgresJournal({ connectionString: PG_URL, schema });
    await journal.migrate();
    await journal.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const samples = fc.sample(fc.tuple(keys, fc.integer({ min: 0, max: 16 })), { numRuns: 3_000, seed: 40 });
      samples.push(["", 6], ["42", 6], ["注文-🧾-שלום-\u0001", 6], ["\u{1F9FE}\u{10FFFF}", 16]);
      const { rows } = await client.query(
        `SELECT "${schema}".oncely_slice_of(k, c) AS slice FROM unnest($1::text[], $2::integer[]) AS u(k, c)`,
        [samples.map(([key]) => key), samples.map(([, bits]) => 2 ** bits)],
      );
      expect(rows.map((r) => r.slice)).toEqual(samples.map(([key, bits]) => sliceOf(key, 2 ** bits)));
    } finally {
      await client.end();
    }
  });

  it("backfills the rows of a schema migrated before slices, as the journal computes them", async () => {
    const { schema, drop } = await freshPgSchema("slice_backfill");
    drops.push(drop);
    const t = tables(schema, 16);
    const [baseline] = pgMigrations;
    if (!baseline) throw new Error("no baseline");
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      for (const file of baseline.files) await client.query(fileSql(baseline, file, t));
      await client.query(bookkeepingSql(t));
      await client.query(`INSERT INTO ${t.migrations} VALUES (1, $1, 0)`, [baseline.name]);
      for (const r of OLD_ROWS) {
        await client.query(
          `INSERT INTO ${t.outbox} (id, category, kind, stream, payload, status, attempts, not_before, result, created_at, updated_at)
           VALUES ($1, $2, 'k', $3, $4, $5, 0, 0, 'null', 0, 0)`,
          [r.id, r.category, r.stream, JSON.stringify(r.payload), r.status],
        );
      }
      const journal = postgresJournal({ connectionString: PG_URL, schema, sliceCount: 16 });
      await journal.migrate();
      await journal.close();
      const { rows } = await client.query(`SELECT id, slice FROM ${t.outbox} ORDER BY id`);
      expect(Object.fromEntries(rows.map((r) => [r.id, r.slice]))).toEqual(expected(16));
    } finally {
      await client.end();
    }
  });
});

describe("outbox slices on SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-slices-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("backfills the rows of a file migrated before slices, as the journal computes them", async () => {
    const path = join(dir, "old.db");
    const db = new Database(path);
    try {
      for (const migration of sqliteMigrations.slice(0, 3)) db.exec(migration.sql);
      db.exec(
        "CREATE TABLE oncely_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
      );
      for (const m of sqliteMigrations.slice(0, 3)) {
        db.prepare("INSERT INTO oncely_schema_migrations VALUES (?, ?, 0)").run(m.version, m.name);
      }
      OLD_ROWS.forEach((r, i) => {
        db.prepare(
          `INSERT INTO outbox (id, seq, category, kind, stream, payload, status, attempts, not_before, result, created_at, updated_at)
           VALUES (?, ?, ?, 'k', ?, ?, ?, 0, 0, 'null', 0, 0)`,
        ).run(r.id, i + 1, r.category, r.stream, JSON.stringify(r.payload), r.status);
      });
    } finally {
      db.close();
    }
    const journal = sqliteJournal({ path, sliceCount: 16 });
    await journal.migrate();
    await journal.close();
    const after = new Database(path, { readonly: true });
    try {
      const rows = after.prepare("SELECT id, slice FROM outbox ORDER BY id").all() as { id: string; slice: number }[];
      expect(Object.fromEntries(rows.map((r) => [r.id, r.slice]))).toEqual(expected(16));
    } finally {
      after.close();
    }
  });
});
