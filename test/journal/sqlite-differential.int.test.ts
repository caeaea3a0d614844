import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { propertyRuns } from "../support/property-runs.js";
import { operations, runBoth } from "./differential.js";

const dir = mkdtempSync(join(tmpdir(), "oncely-sqlite-diff-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("sqlite journal behaves like the memory journal", () => {
  it("gives the same answers and final state for random operation sequences", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(operations, async (ops) => {
        const subject = sqliteJournal({ path: join(dir, `diff-${++n}.db`) });
        await subject.migrate();
        try {
          await runBoth(new MemoryJournal(), subject, ops);
        } finally {
          await subject.close();
        }
      }),
      { numRuns: propertyRuns(30, 100) },
    );
  });
});
