import { describe } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { publishAtCommitSuite } from "./support/publish-at-commit-suite.js";

describe("events published by their own commit: memory journal", () => {
  publishAtCommitSuite(async () => ({ journal: new MemoryJournal(), close: async () => {} }));
});
