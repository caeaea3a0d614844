import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalConformance } from "../../src/journal/conformance.js";
import { MemoryJournal } from "../../src/journal/memory.js";

journalConformance({ describe, it, expect, beforeEach, afterEach }, "memory", async () => {
  const journal = new MemoryJournal();
  // One store, so a "second writer" and a "reopened" journal are the same instance.
  return { journal, reopen: async () => journal, secondWriter: async () => journal, cleanup: async () => {} };
});
