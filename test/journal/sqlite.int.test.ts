import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalConformance } from "../../src/journal/conformance.js";
import type { Journal } from "../../src/journal/types.js";
import { sqliteJournal } from "../../src/sqlite/index.js";

const dir = mkdtempSync(join(tmpdir(), "oncely-sqlite-conformance-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

journalConformance({ describe, it, expect, beforeEach, afterEach }, "sqlite", async () => {
  const path = join(dir, `journal-${++n}.db`);
  const opened: Journal[] = [];
  const open = async () => {
    const journal = sqliteJournal({ path });
    opened.push(journal);
    await journal.migrate();
    return journal;
  };
  const journal = await open();
  return {
    journal,
    reopen: open,
    secondWriter: open,
    cleanup: async () => {
      for (const j of opened) await j.close();
    },
  };
});
