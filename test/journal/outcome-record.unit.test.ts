import { describe, expect, it } from "vitest";
import { outcomeRecorded } from "../../src/advanced.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { effectRow } from "./fixtures/outbox-row.js";

describe("outcomeRecorded", () => {
  it("finds an outcome recorded by its done row or by an inbox row, and nothing else", async () => {
    const journal = memoryJournal();
    await journal.commit({
      outbox: [effectRow("by-row"), effectRow("by-inbox"), effectRow("open"), effectRow("v", { category: "event" })],
      now: 1,
    });
    const outcome = (id: string, reply: unknown) =>
      journal.commit({
        stream: "order/1",
        outboxDone: [{ id, outcome: "completed" }],
        inbox: { consumer: "order/1", messageId: `${id}#outcome`, reply, outcomeOf: reply === null ? id : undefined },
        now: 2,
      });
    await outcome("by-row", null);
    await outcome("by-inbox", { ok: true });
    await journal.commit({ outboxDone: [{ id: "v", outcome: "published" }], now: 3 });
    const recorded = (owner: string, id: string) => outcomeRecorded(journal, owner, id, `${id}#outcome`);
    expect(await journal.getInbox("order/1", "by-row#outcome")).toBeUndefined();
    expect(await recorded("order/1", "by-row")).toBe(true);
    expect(await recorded("order/1", "by-inbox")).toBe(true);
    expect(await recorded("order/1", "open")).toBe(false);
    // Done, but not by an outcome of this owner: an event row, another owner's row, no row at all.
    expect(await recorded("order/1", "v")).toBe(false);
    expect(await recorded("order/2", "by-row")).toBe(false);
    expect(await recorded("order/1", "never")).toBe(false);
  });
});
