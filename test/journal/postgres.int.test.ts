import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalConformance } from "../../src/journal/conformance.js";
import { freshPgSchema, probePostgres } from "../support/services.js";
import { pgSubjects } from "./pg-subject.js";

const service = await probePostgres();

if (!service.available) {
  describe.skip(`journal conformance: postgres (skipped: ${service.reason})`, () => {
    it("needs PostgreSQL", () => {});
  });
} else {
  const { schema, drop } = await freshPgSchema("pg_conformance");
  const subjects = pgSubjects(schema);
  afterAll(async () => {
    await subjects.end();
    await drop();
  });
  journalConformance({ describe, it, expect, beforeEach, afterEach }, "postgres", subjects.factory);
}
