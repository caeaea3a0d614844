import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe } from "vitest";
import { postgresJournal } from "../../src/postgres/index.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { publishAtCommitSuite } from "./support/publish-at-commit-suite.js";

const dir = mkdtempSync(join(tmpdir(), "oncely-publish-at-commit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("events published by their own commit: SQLite journal", () => {
  let n = 0;
  publishAtCommitSuite(async () => {
    const journal = sqliteJournal({ path: join(dir, `journal-${++n}.db`) });
    await journal.migrate();
    return { journal, close: () => journal.close() };
  });
});

const pg = await probePostgres();

describe.skipIf(!pg.available)(`events published by their own commit: PostgreSQL journal ${pg.reason}`, () => {
  publishAtCommitSuite(async () => {
    const fresh = await freshPgSchema("publish_at_commit");
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
