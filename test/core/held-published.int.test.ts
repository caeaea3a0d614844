import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe } from "vitest";
import { postgresJournal } from "../../src/postgres/index.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { heldPublishedSuite } from "./support/held-published-suite.js";

const dir = mkdtempSync(join(tmpdir(), "oncely-held-published-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("published counts held by the activation: SQLite journal", () => {
  let n = 0;
  heldPublishedSuite(async () => {
    const journal = sqliteJournal({ path: join(dir, `journal-${++n}.db`) });
    await journal.migrate();
    return { journal, close: () => journal.close() };
  });
});

const pg = await probePostgres();

describe.skipIf(!pg.available)(`published counts held by the activation: PostgreSQL journal ${pg.reason}`, () => {
  heldPublishedSuite(async () => {
    const fresh = await freshPgSchema("held_published");
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
