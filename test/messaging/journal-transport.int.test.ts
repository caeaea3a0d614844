import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe } from "vitest";
import type { Journal } from "../../src/journal/types.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { journalTransportSuite } from "./support/journal-transport-suite.js";

/** Journals opened by a test, closed after it (and schemas dropped after the file). */
const opened: Journal[] = [];
afterEach(async () => {
  for (const journal of opened.splice(0)) await journal.close();
});
let n = 0;

describe("journal transport: sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-journal-transport-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  journalTransportSuite(async () => {
    const path = join(dir, `log-${++n}.db`);
    const open = async () => {
      const journal = sqliteJournal({ path });
      opened.push(journal);
      await journal.migrate();
      return journal;
    };
    return { journal: await open(), reopen: open };
  });
});

const service = await probePostgres();
describe.skipIf(!service.available)(
  `journal transport: postgres${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    const drops: (() => Promise<void>)[] = [];
    afterAll(async () => {
      for (const drop of drops) await drop();
    });
    journalTransportSuite(async () => {
      const { schema, drop } = await freshPgSchema(`jt${++n}`);
      drops.push(drop);
      const open = async () => {
        const journal = postgresJournal({ connectionString: PG_URL, schema, max: 4 });
        opened.push(journal);
        await journal.migrate();
        return journal;
      };
      return { journal: await open(), reopen: open };
    });
  },
);
