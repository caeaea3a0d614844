import { memoryJournal } from "../../src/journal/memory.js";
import { sharedDocumentsSuite } from "./support/shared-documents-suite.js";

sharedDocumentsSuite("memory", async () => ({ journal: memoryJournal(), close: async () => {} }), 100);
