import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/core/clock.js";
import { CONFORMANCE_SEED, conformanceContext } from "../../src/journal/conformance-fixtures.js";
import { MemoryJournal } from "../../src/journal/memory.js";

describe("journal conformance ids", () => {
  it("are drawn from the seeded random: the same seed before a test draws the same ids, so a failure reproduces", () => {
    const subject = { journal: new MemoryJournal(), reopen: async () => subject.journal, cleanup: async () => {} };
    let random = seededRandom(CONFORMANCE_SEED);
    const ctx = conformanceContext({ describe, it, expect, beforeEach: () => {}, afterEach: () => {} }, () => ({
      subject,
      random,
    }));
    const first = [...ctx.events(3, "a"), ...(ctx.fullCommit("order/1", 0, "x").events ?? [])].map((e) => e.eventId);
    random = seededRandom(CONFORMANCE_SEED);
    const again = [...ctx.events(3, "a"), ...(ctx.fullCommit("order/1", 0, "x").events ?? [])].map((e) => e.eventId);
    expect(again).toEqual(first);
    // Within a test the ids stay apart: the same tag and number draw another random part.
    expect(new Set([...first, ...ctx.events(3, "a").map((e) => e.eventId)]).size).toBe(8);
  });
});
