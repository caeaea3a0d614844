import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { HAND_OVER_CONCURRENCY } from "../../src/messaging/handed-over.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProjection } from "../../src/messaging/projection.js";
import { Relay } from "../../src/messaging/relay.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { handOverSuite } from "./support/hand-over-suite.js";
import { orderEvent, orderEvents, perEventCount, producer } from "./support/orders.js";

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

describe("a consumer's handed-over events", () => {
  it("are handled at most HAND_OVER_CONCURRENCY at once; the rest are left to their durable copies", async () => {
    const journal = new MemoryJournal();
    const consumer = new Consumer({ name: "bounded", journal, handler: perEventCount, metrics: messagingMetrics() });
    const events = orderEvents(Array.from({ length: 14 }, () => 5));
    expect(events.length).toBeGreaterThan(HAND_OVER_CONCURRENCY);
    const results = await Promise.all(
      events.map((e) => consumer.handOver(e, { messageId: `${e.eventId}#m`, body: JSON.stringify(e) })),
    );
    expect(results.filter(Boolean)).toHaveLength(HAND_OVER_CONCURRENCY);
    expect(results.slice(HAND_OVER_CONCURRENCY).every((handled) => !handled)).toBe(true);
    expect(consumer.stats.handedOver).toBe(HAND_OVER_CONCURRENCY);
    // Once those settled, the next one is handed over again.
    const next = orderEvent("later", 1);
    expect(await consumer.handOver(next, { messageId: "later#m", body: JSON.stringify(next) })).toBe(true);
  });
});
