import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll } from "vitest";
import { sqliteJournal } from "../../src/sqlite/index.js";

/**
 * A freshly migrated SQLite journal file, opened read-only for the suite that calls this (the plan
 * tests read `EXPLAIN QUERY PLAN` from it; the journal runs no ANALYZE, so plans do not depend on
 * rows). Registers its own beforeAll/afterAll; call the returned function inside a test.
 */
export function useMigratedSqliteFile(prefix: string): () => Database.Database {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let db: Database.Database | undefined;
  beforeAll(async () => {
    const path = join(dir, "journal.db");
    const journal = sqliteJournal({ path });
    await journal.migrate();
    await journal.close();
    db = new Database(path, { readonly: true });
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (!db) throw new Error("the migrated SQLite file is opened in beforeAll: call this inside a test");
    return db;
  };
}
