import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { sliceOf } from "../../src/core/slices.js";
import { bookkeepingSql } from "../../src/postgres/development-schema.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { migrations as pgMigrations } from "../../src/postgres/migrations.js";
import { fileSql } from "../../src/postgres/schema-files.js";
import { tables } from "../../src/postgres/tables.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { migrations as sqliteMigrations } from "../../src/sqlite/migrations.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

/** Entries as a log before slices stored them: envelopes (keyed by aggregateId), and bodies that are not. */
const OLD = [
  { id: "m1", body: JSON.stringify({ eventId: "e1", aggregateId: "order-42" }) },
  { id: "m2", body: JSON.stringify({ eventId: "e2", aggregateId: "注文-🧾" }) },
  { id: "m3", body: "not json" },
  { id: "m4", body: JSON.stringify({ eventId: "e4", aggregateId: 7 }) },
  { id: "m5", body: "[1, 2]" },
];
const expected = (count: number) =>
  Object.fromEntries(
    OLD.map((e) => [e.id, sliceOf(e.id === "m1" ? "order-42" : e.id === "m2" ? "注文-🧾" : e.id, count)]),
  );

const service = await probePostgres();
describe.skipIf(!service.available)("published log slices on PostgreSQL", () => {
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it("backfills the entries of a schema migrated before slices by their body's aggregateId, else their message id", async () => {
    const { schema, drop } = await freshPgSchema("published_backfill");
    drops.push(drop);
    const t = tables(schema, 16);
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(bookkeepingSql(t));
      for (const migration of pgMigrations.slice(0, 3)) {
        for (const file of migration.files) await client.query(fileSql(migration, file, t));
        await client.query(`INSERT INTO ${t.migrations} VALUES ($1, $2, 0)`, [migration.version, migration.name]);
      }
      for (const e of OLD) {
        await client.query(
          `INSERT INTO ${t.published} (message_id, subject, body, published_at) VALUES ($1, 's', $2, 0)`,
          [e.id, e.body],
        );
      }
      const journal = postgresJournal({ connectionString: PG_URL, schema, sliceCount: 16 });
      await journal.migrate();
      // A client older than the migration passes no slice: the function computes it from the body.
      await client.query(`SELECT ${t.publishFunction}('m6', 's', $1, 0)`, [JSON.stringify({ aggregateId: "late" })]);
      const log = await journal.readPublished(0);
      await journal.close();
      expect(Object.fromEntries(log.map((e) => [e.messageId, e.slice]))).toEqual({
        ...expected(16),
        m6: sliceOf("late", 16),
      });
    } finally {
      await client.end();
    }
  });
});

describe("published log slices on SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-published-slices-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("backfills the entries of a file migrated before slices by their body's aggregateId, else their message id", async () => {
    const path = join(dir, "old.db");
    const db = new Database(path);
    try {
      db.exec(
        "CREATE TABLE oncely_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
      );
      for (const m of sqliteMigrations.slice(0, 5)) {
        // Version 4's backfill calls the journal's function; no outbox rows here, so a stand-in is never called.
        db.function("oncely_outbox_slice", (_c: unknown, _s: unknown, _p: unknown) => 0);
        db.exec(m.sql);
        db.prepare("INSERT INTO oncely_schema_migrations VALUES (?, ?, 0)").run(m.version, m.name);
      }
      for (const e of OLD) {
        db.prepare("INSERT INTO published (message_id, subject, body, published_at) VALUES (?, 's', ?, 0)").run(
          e.id,
          e.body,
        );
      }
    } finally {
      db.close();
    }
    const journal = sqliteJournal({ path, sliceCount: 16 });
    await journal.migrate();
    const log = await journal.readPublished(0);
    await journal.close();
    expect(Object.fromEntries(log.map((e) => [e.messageId, e.slice]))).toEqual(expected(16));
  });
});
