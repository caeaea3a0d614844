import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { onPostgres } from "../journal/pg-subject.js";
import { sharedDocumentsSuite } from "./support/shared-documents-suite.js";

const dir = mkdtempSync(join(tmpdir(), "oncely-shared-docs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

sharedDocumentsSuite(
  "sqlite",
  async () => {
    const journal = sqliteJournal({ path: join(dir, `docs-${++n}.db`) });
    await journal.migrate();
    return { journal, close: () => journal.close() };
  },
  15,
);

await onPostgres("shared_docs", "several source streams into one document: postgres", (factory) => {
  sharedDocumentsSuite(
    "postgres",
    async () => {
      const { journal, cleanup } = await factory();
      return { journal, close: cleanup };
    },
    8,
  );
});
