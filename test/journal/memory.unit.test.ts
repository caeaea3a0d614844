import { journalConformance } from "../../src/journal/conformance.js";
import { MemoryJournal } from "../../src/journal/memory.js";

journalConformance("memory", async () => {
  const journal = new MemoryJournal();
  // One store, so a "second writer" and a "reopened" journal are the same instance.
  return { journal, reopen: async () => journal, secondWriter: async () => journal, cleanup: async () => {} };
});
