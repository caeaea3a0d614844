import { describe } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { handOverSuite } from "./support/hand-over-suite.js";

describe("events handed over at commit: journal transport", () => {
  let n = 0;
  handOverSuite(async () => {
    const journal = new MemoryJournal();
    const transport = new JournalTransport({ journal, pollMs: 20 });
    return { journal, transport, prefix: `shop${++n}`, close: () => transport.close() };
  });
});
