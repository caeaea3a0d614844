import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { TerminalError } from "../../src/base/errors.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { migrations } from "../../src/sqlite/migrations.js";

/**
 * SQLite's migrations are numbered on their own (1, 2, 3...). A file migrated when they carried
 * PostgreSQL's numbers (1, 4 and 13, the same SQL) has its versions recorded anew and nothing run
 * again; a version no SQLite schema had is refused.
 */
describe("SQLite's migrations", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-sqlite-migrations-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;

  /** A file as the shared numbering left it: the SQL of `upTo` of its migrations, recorded as `recorded`. */
  const sharedNumbering = (upTo: number, recorded: number[]): string => {
    const path = join(dir, `shared-${++files}.db`);
    const db = new Database(path);
    try {
      for (const migration of migrations.slice(0, upTo)) db.exec(migration.sql);
      db.exec("CREATE TABLE oncely_schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
      for (const version of recorded) db.prepare("INSERT INTO oncely_schema_migrations VALUES (?, 7)").run(version);
      db.prepare(
        "INSERT INTO events (stream, version, event_id, type, data, recorded_at, schema_version) VALUES (?, 1, ?, ?, '{}', 1, 1)",
      ).run("order/1", "e-1", "Placed");
    } finally {
      db.close();
    }
    return path;
  };

  const recorded = (path: string) => {
    const db = new Database(path, { readonly: true });
    try {
      return db.prepare("SELECT version, name FROM oncely_schema_migrations ORDER BY version").all();
    } finally {
      db.close();
    }
  };

  it("are numbered 1, 2, 3... without a gap, each with a name", () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    expect(new Set(migrations.map((m) => m.name)).size).toBe(migrations.length);
  });

  it("record each version with its name on a fresh file", async () => {
    const path = join(dir, "fresh.db");
    const journal = sqliteJournal({ path });
    await journal.migrate();
    await journal.close();
    expect(recorded(path)).toEqual(migrations.map((m) => ({ version: m.version, name: m.name })));
  });

  for (const [upTo, shared] of [
    [3, [1, 4, 13]],
    [2, [1, 4]],
    [1, [1]],
  ] as const) {
    it(`renumber a file that recorded ${shared.join(", ")}: its data kept, the rest applied`, async () => {
      const path = sharedNumbering(upTo, [...shared]);
      const journal = sqliteJournal({ path });
      try {
        await journal.migrate();
        expect(recorded(path)).toEqual(migrations.map((m) => ({ version: m.version, name: m.name })));
        expect((await journal.readStream("order/1")).map((e) => e.eventId)).toEqual(["e-1"]);
        expect(await journal.appendPublished({ messageId: "m", subject: "s", body: "{}" }, 1)).toBe(1);
      } finally {
        await journal.close();
      }
    });
  }

  it("refuse a file recording a version no SQLite schema had, naming it", async () => {
    const path = sharedNumbering(3, [1, 4, 7, 13]);
    const journal = sqliteJournal({ path });
    try {
      const error = await journal.migrate().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TerminalError);
      expect((error as Error).message).toMatch(
        /records schema versions 7, which no version of oncely's SQLite schema had/,
      );
    } finally {
      await journal.close();
    }
  });
});
