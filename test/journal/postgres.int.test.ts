import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalConformance } from "../../src/journal/conformance.js";
import { onPostgres } from "./pg-subject.js";

await onPostgres("pg_conformance", `journal conformance: postgres`, (factory) => {
  journalConformance({ describe, it, expect, beforeEach, afterEach }, "postgres", factory);
});
