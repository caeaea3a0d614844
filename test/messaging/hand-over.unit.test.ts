import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProjection } from "../../src/messaging/projection.js";
import { Relay } from "../../src/messaging/relay.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { handOverSuite } from "./support/hand-over-suite.js";
import { producer } from "./support/orders.js";

describe("events handed over at commit: journal transport", () => {
  let n = 0;
  handOverSuite(async () => {
    const journal = new MemoryJournal();
    const transport = new JournalTransport({ journal, pollMs: 20 });
    return { journal, transport, prefix: `shop${++n}`, close: () => transport.close() };
  });
});

describe("a handed-over event whose handling fails", () => {
  it("is counted and left to its durable copy, which handles it once", async () => {
    const journal = new MemoryJournal();
    const clock = new SimulatedClock();
    const runtime = createRuntime({ journal, actors: [producer], clock, ids: sequentialIds("e") });
    const transport = new JournalTransport({ journal, pollMs: 20 });
    const relay = new Relay({ journal, transport, clock, subjectPrefix: "shop", metrics: messagingMetrics() });
    let calls = 0;
    const flaky = defineProjection<{ count: number }>({
      collection: "flaky",
      key: (e) => e.eventId,
      project: (doc) => {
        calls++;
        if (calls === 1) throw new Error("the first handling fails");
        return { count: (doc?.count ?? 0) + 1 };
      },
    });
    const consumer = new Consumer({ name: "flaky", journal, clock, handler: flaky, metrics: messagingMetrics() });
    await consumer.subscribe(transport, { subjects: ["shop.>"] });
    relay.handOverTo(runtime, [{ consumer, subjects: ["shop.>"] }]);
    relay.start();
    try {
      await runtime.send("producer/f", { type: "Record", event: "E1" });
      await transport.idle();
      const docs = await journal.listDocuments("flaky");
      expect(docs.map((d) => (d.doc as { count: number }).count)).toEqual([1]);
      expect(consumer.stats).toMatchObject({ handOverFailures: 1, copiesSettled: 0, applied: 1, deadLetters: 0 });
    } finally {
      await relay.stop();
      runtime.close();
      await transport.close();
    }
  });
});
