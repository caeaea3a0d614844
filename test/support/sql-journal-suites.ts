import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe } from "vitest";
import type { Journal } from "../../src/journal/types.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { freshPgSchema, PG_URL, probePostgres } from "./services.js";

/** A migrated journal a suite's test opens, and how to close it (dropping its schema or leaving its file). */
export type OpenJournal = () => Promise<{ journal: Journal; close: () => Promise<void> }>;

/**
 * Run `suite` on SQLite (a fresh file per opening) and on PostgreSQL (a fresh schema per opening,
 * skipped with the reason when the server is not there), under `title: SQLite journal` and
 * `title: PostgreSQL journal`. `name` names the temporary directory and the schemas.
 */
export async function onSqliteAndPostgres(title: string, name: string, suite: (open: OpenJournal) => void) {
  const dir = mkdtempSync(join(tmpdir(), `oncely-${name.replaceAll("_", "-")}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  describe(`${title}: SQLite journal`, () => {
    let n = 0;
    suite(async () => {
      const journal = sqliteJournal({ path: join(dir, `journal-${++n}.db`) });
      await journal.migrate();
      return { journal, close: () => journal.close() };
    });
  });
  const pg = await probePostgres();
  describe.skipIf(!pg.available)(`${title}: PostgreSQL journal ${pg.reason}`, () => {
    suite(async () => {
      const fresh = await freshPgSchema(name);
      const journal = postgresJournal({ connectionString: PG_URL, schema: fresh.schema });
      await journal.migrate();
      return {
        journal,
        close: async () => {
          await journal.close();
          await fresh.drop();
        },
      };
    });
  });
}
