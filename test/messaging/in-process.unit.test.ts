import { describe, expect, it } from "vitest";
import { seededRandom, sequentialIds } from "../../src/core/clock.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProjection } from "../../src/messaging/projection.js";
import { subjectFor } from "../../src/messaging/subjects.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvents, orderFacts, orderTimeline } from "./support/orders.js";

describe("in-process transport with injected duplicates, delays and reordering", () => {
  for (const seed of [1, 2, 3]) {
    it(`ends in the in-order state (seed ${seed})`, async () => {
      const transport = new InProcessTransport({
        random: seededRandom(seed),
        faults: { duplicateRate: 0.3, maxDelayMs: 3, reorderWindow: 8 },
        retryBaseMs: 1,
      });
      const journal = memoryJournal();
      const metrics = messagingMetrics();
      const facts = new Consumer({ name: "facts", journal, handler: orderFacts, metrics, retryBaseMs: 1 });
      const timeline = new Consumer({ name: "timeline", journal, handler: orderTimeline, mode: "sequenced", metrics });
      const subs = [
        await facts.subscribe(transport, { subjects: ["shop.orders.*"] }),
        await timeline.subscribe(transport, { subjects: ["shop.>"], concurrency: 4 }),
      ];
      const events = orderEvents([5, 3, 5, 1, 4, 5]);
      for (const e of events) await transport.publish(e, subjectFor("shop", e));
      await transport.idle();
      expect(transport.stats.duplicatesInjected).toBeGreaterThan(0);

      const expected = memoryJournal();
      const refFacts = new Consumer({ name: "facts", journal: expected, handler: orderFacts, metrics });
      const refTimeline = new Consumer({
        name: "t",
        journal: expected,
        handler: orderTimeline,
        mode: "sequenced",
        metrics,
      });
      for (const e of events) {
        await refFacts.handle(e);
        await refTimeline.handle(e);
      }
      for (const collection of [orderFacts.collection, orderTimeline.collection]) {
        expect((await journal.listDocuments(collection)).map((d) => d.doc)).toEqual(
          (await expected.listDocuments(collection)).map((d) => d.doc),
        );
      }
      expect(await journal.listParked("timeline")).toEqual([]);
      for (const s of subs) await s.stop();
    });
  }

  it("a poison message is retried, dead-lettered after max deliveries, and never blocks the others", async () => {
    const transport = new InProcessTransport({ retryBaseMs: 1 });
    const journal = memoryJournal();
    const poisonous = defineProjection<{ n: number }>({
      collection: "p",
      key: (e) => e.eventId,
      project(doc, e) {
        if (e.aggregateId === "o2") throw new Error("cannot handle o2");
        return { n: (doc?.n ?? 0) + 1 };
      },
    });
    const consumer = new Consumer({
      name: "p",
      journal,
      handler: poisonous,
      metrics: messagingMetrics(),
      maxDeliveries: 4,
      retryBaseMs: 1,
      retryMaxMs: 2,
      ids: sequentialIds("dl"),
    });
    const sub = await consumer.subscribe(transport, { subjects: [">"], concurrency: 1 });
    const events = orderEvents([2, 1, 2]);
    for (const e of events) await transport.publish(e, subjectFor("shop", e));
    transport.publishRaw("shop.orders.Garbage", "\u0000garbage");
    await transport.idle();
    expect((await journal.listDocuments("p")).map((d) => d.id)).toEqual([
      "o1:OrderPlaced",
      "o1:PaymentProcessed",
      "o3:OrderPlaced",
      "o3:PaymentProcessed",
    ]);
    const letters = await journal.listDeadLetters();
    // Listed by first failure time, which depends on real timing here: compare as a set.
    expect(letters.map((l) => [l.messageId, l.attempts]).sort()).toEqual(
      [
        ["o2:OrderPlaced", 4],
        [null, 1],
      ].sort(),
    );
    await sub.stop();
  });

  it("never drops: a message whose handler keeps failing comes back until it is handled", async () => {
    const transport = new InProcessTransport({ retryBaseMs: 1, retryMaxMs: 1 });
    let calls = 0;
    // Fails well past maxDeliveries, as a subscriber whose dead-letter store is down would.
    const sub = await transport.subscribe("raw", { subjects: ["a.>"], maxDeliveries: 2 }, async () => {
      calls++;
      if (calls <= 6) throw new Error("dead-letter store down too");
      return { kind: "ack" };
    });
    transport.publishRaw("a.b", "x", "m1");
    transport.publishRaw("a.b", "x", "m1"); // same id: stored once
    await transport.idle();
    expect(calls).toBe(7);
    expect(transport.stats).toMatchObject({ published: 1, deduplicated: 1 });
    await sub.stop();
  });

  it("a durable resumes where it left off and sees messages published before it subscribed", async () => {
    const transport = new InProcessTransport();
    transport.publishRaw("a.b", "1", "m1");
    const seen: string[] = [];
    const handler = async (d: { body: string }) => {
      seen.push(d.body);
      return { kind: "ack" as const };
    };
    const sub = await transport.subscribe("d", { subjects: ["a.*"] }, handler);
    await transport.idle();
    await sub.stop();
    transport.publishRaw("a.c", "2", "m2");
    transport.publishRaw("x.c", "3", "m3");
    await transport.idle();
    expect(seen).toEqual(["1"]);
    const again = await transport.subscribe("d", { subjects: ["a.*"] }, handler);
    await transport.idle();
    expect(seen).toEqual(["1", "2"]);
    await again.stop();
  });

  it("pending counts what a subscription has left: in hand, ready, waiting out a nak; 0 once settled", async () => {
    const clock = new SimulatedClock();
    const transport = new InProcessTransport({ clock });
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const naked = new Set<string>();
    let handled = 0;
    const sub = await transport.subscribe("p", { subjects: ["a.*"], concurrency: 1 }, async (d) => {
      await gate;
      if (d.body === "2" && !naked.has(d.body)) {
        naked.add(d.body);
        return { kind: "nak", delayMs: 10_000 };
      }
      handled++;
      return { kind: "ack" };
    });
    for (const body of ["1", "2", "3"]) transport.publishRaw("a.b", body, `m${body}`);
    transport.publishRaw("x.b", "4", "m4"); // not for it
    expect(await sub.pending()).toBe(3);
    open();
    // Only the nak'ed one is left, waiting for its redelivery on the clock.
    for (let i = 0; i < 100 && handled < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(handled).toBe(2);
    expect(await sub.pending()).toBe(1);
    clock.advance(10_000);
    await transport.idle();
    expect(await sub.pending()).toBe(0);
    await sub.stop();
  });
});
