import { describe } from "vitest";
import { memoryJournal } from "../../src/testing/index.js";
import { heldPublishedSuite } from "./support/held-published-suite.js";

describe("published counts held by the activation: memory journal", () => {
  heldPublishedSuite(async () => ({ journal: memoryJournal(), close: async () => {} }));
});
