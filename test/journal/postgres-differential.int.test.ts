import fc from "fast-check";
import { afterAll, describe, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { freshPgSchema, probePostgres } from "../support/services.js";
import { operations, runBoth } from "./differential.js";
import { pgSubjects } from "./pg-subject.js";

const service = await probePostgres();

if (!service.available) {
  describe.skip(`postgres journal behaves like the memory journal (skipped: ${service.reason})`, () => {
    it("needs PostgreSQL", () => {});
  });
} else {
  const { schema, drop } = await freshPgSchema("pg_differential");
  const subjects = pgSubjects(schema);
  afterAll(async () => {
    await subjects.end();
    await drop();
  });

  describe("postgres journal behaves like the memory journal", () => {
    it("gives the same answers and final state for random operation sequences", async () => {
      await fc.assert(
        fc.asyncProperty(operations, async (ops) => {
          const subject = await subjects.factory();
          try {
            await runBoth(new MemoryJournal(), subject.journal, ops);
          } finally {
            await subject.cleanup();
          }
        }),
        { numRuns: 40 },
      );
    });
  });
}
