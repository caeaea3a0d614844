import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TerminalStorageError } from "../../src/base/errors.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { onPostgres } from "../journal/pg-subject.js";
import { poisonSuite } from "./support/poison-suite.js";

const dir = mkdtempSync(join(tmpdir(), "oncely-poison-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

poisonSuite("sqlite", async () => {
  const journal = sqliteJournal({ path: join(dir, `poison-${++n}.db`) });
  await journal.migrate();
  return { journal, close: () => journal.close() };
});

await onPostgres("poison", `poison messages: postgres`, (factory) => {
  const open = async () => {
    const { journal, cleanup } = await factory();
    return { journal, close: cleanup };
  };
  poisonSuite("postgres", open);

  describe("PostgreSQL data errors are terminal", () => {
    it("a number out of a column's range (22003) is a TerminalStorageError, nothing written", async () => {
      const { journal, close } = await open();
      try {
        const error = await journal
          .commit({
            checkpoint: { consumer: "c", source: "s", version: 2 ** 31 },
            documents: [{ collection: "witness", id: "w", doc: {} }],
            now: 1,
          })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TerminalStorageError);
        expect((error as Error).message).toMatch(/22003/);
        expect(await journal.getDocument("witness", "w")).toBeUndefined();
      } finally {
        await close();
      }
    });
  });
});
