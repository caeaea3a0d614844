import { describe, expect, it } from "vitest";
import { publishedAtCommitRows } from "../../src/console/timeline/published-rows.js";
import { sequentialIds } from "../../src/core/clock.js";
import { createHost } from "../../src/host/host.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { producer } from "../messaging/support/orders.js";

describe("the timeline's events published by their own commit", () => {
  it("are found in the log and given to the actor whose commit carried them, as done event rows", async () => {
    const journal = new MemoryJournal();
    const clock = new SimulatedClock(1_700_000_000_000);
    const host = createHost({ journal, actors: [producer], transport: "journal", clock, ids: sequentialIds("e") });
    await host.start();
    try {
      await host.send("producer/a", { type: "Record", event: "E1" }, { messageId: "cmd-1" });
      clock.advance(5);
      await host.send("producer/b", { type: "Record", event: "E1" }, { messageId: "cmd-2" });
      await host.send("producer/a", { type: "Record", event: "E2" }, { messageId: "cmd-3" });
    } finally {
      await host.stop();
    }
    expect(await journal.listOutbox({ category: "event" })).toEqual([]);
    const actor = async (stream: string) => ({ stream, events: await journal.readStream(stream), published: [] });
    const found = await publishedAtCommitRows(journal, [await actor("producer/a"), await actor("producer/b")], 100);
    expect(found.get("producer/a")?.map((r) => [r.id, r.kind, r.category, r.status, r.outcome])).toEqual([
      ["a:1:E1", "E1", "event", "done", "published"],
      ["a:2:E2", "E2", "event", "done", "published"],
    ]);
    expect(found.get("producer/b")?.map((r) => r.id)).toEqual(["b:1:E1"]);
    // An actor not asked for gets none of its entries.
    const alone = await publishedAtCommitRows(journal, [await actor("producer/b")], 100);
    expect([...alone.keys()]).toEqual(["producer/b"]);
  });
});
