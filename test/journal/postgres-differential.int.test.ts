import fc from "fast-check";
import { describe, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { propertyRuns } from "../support/property-runs.js";
import { operations, runBoth } from "./differential.js";
import { onPostgres } from "./pg-subject.js";

await onPostgres("pg_differential", `postgres journal behaves like the memory journal`, (factory) => {
  describe("postgres journal behaves like the memory journal", () => {
    it("gives the same answers and final state for random operation sequences", async () => {
      await fc.assert(
        fc.asyncProperty(operations, async (ops) => {
          const subject = await factory();
          try {
            await runBoth(new MemoryJournal(), subject.journal, ops);
          } finally {
            await subject.cleanup();
          }
        }),
        { numRuns: propertyRuns(15, 40) },
      );
    });
  });
});
