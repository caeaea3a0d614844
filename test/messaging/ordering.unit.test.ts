import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { Consumer } from "../../src/messaging/consumer.js";
import type { Envelope } from "../../src/messaging/envelope.js";
import type { GapInfo } from "../../src/messaging/gaps.js";
import type { ProjectionHandler } from "../../src/messaging/handlers.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvents, orderFacts, orderTimeline } from "./support/orders.js";

/**
 * Properties of both ordering modes on the memory journal: whatever the interleaving, duplication
 * and delay of the events of many orders, the final state equals that of in-order delivery.
 */

function consumerFor(
  journal: Journal,
  projection: ProjectionHandler<never> | typeof orderFacts | typeof orderTimeline,
  mode: "facts" | "sequenced",
  clock = new SimulatedClock(),
) {
  return new Consumer({
    name: `c-${projection.collection}`,
    journal,
    handler: projection,
    mode,
    clock,
    ids: sequentialIds("dl"),
    metrics: messagingMetrics(),
    gapTimeoutMs: 1000,
  });
}

/** A delivery schedule: a permutation of the events, some delivered again, in concurrent batches. */
const scenario = fc
  .array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 6 })
  .chain((lengths) => {
    const events = orderEvents(lengths);
    return fc.record({
      events: fc.constant(events),
      order: fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length }),
      duplicates: fc.array(fc.tuple(fc.nat(events.length - 1), fc.nat(events.length)), { maxLength: 8 }),
      batch: fc.integer({ min: 1, max: 4 }),
    });
  })
  .map(({ events, order, duplicates, batch }) => {
    const schedule = [...order];
    for (const [which, at] of duplicates) schedule.splice(at, 0, events[which] as Envelope);
    return { events, schedule, batch };
  });

/** Deliver in batches: the events of one batch are handled concurrently (like a transport's in-flight window). */
async function deliver(consumer: Consumer, schedule: readonly Envelope[], batch: number): Promise<void> {
  for (let i = 0; i < schedule.length; i += batch) {
    await Promise.all(schedule.slice(i, i + batch).map((e) => consumer.handle(e)));
  }
}

const docs = async (journal: Journal, collection: string) =>
  (await journal.listDocuments(collection)).map((d) => ({ id: d.id, doc: d.doc }));

describe("facts mode", () => {
  it("final facts and derived statuses equal those of in-order delivery", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ events, schedule, batch }) => {
        const expected = memoryJournal();
        await deliver(consumerFor(expected, orderFacts, "facts"), events, 1);
        const actual = memoryJournal();
        await deliver(consumerFor(actual, orderFacts, "facts"), schedule, batch);
        expect(await docs(actual, orderFacts.collection)).toEqual(await docs(expected, orderFacts.collection));
        expect(await orderFacts.readAll(actual)).toEqual(await orderFacts.readAll(expected));
        // Every event applied exactly once, whatever the duplicates.
        const applied = (await orderFacts.readAll(actual)).reduce((n, d) => n + d.view.applied, 0);
        expect(applied).toBe(events.length);
      }),
      { numRuns: 60 },
    );
  });

  it("a late PaymentProcessed never downgrades a shipped order", async () => {
    const journal = memoryJournal();
    const consumer = consumerFor(journal, orderFacts, "facts");
    const [placed, paid, ready, shipped] = orderEvents([4]) as [Envelope, Envelope, Envelope, Envelope];
    for (const e of [shipped, placed, ready, paid]) await consumer.handle(e);
    expect(await orderFacts.read(journal, "o1")).toMatchObject({
      payment: "Processed",
      shipping: "Shipped",
      status: "Shipped",
    });
    expect(consumer.stats.backwards).toBe(1); // ShippingReady after OrderShipped
  });
});

describe("sequenced mode", () => {
  it("timelines equal in-order delivery and every parked message is released once gaps fill", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ events, schedule, batch }) => {
        const expected = memoryJournal();
        await deliver(consumerFor(expected, orderTimeline, "sequenced"), events, 1);
        const actual = memoryJournal();
        const consumer = consumerFor(actual, orderTimeline, "sequenced");
        await deliver(consumer, schedule, batch);
        expect(await docs(actual, orderTimeline.collection)).toEqual(await docs(expected, orderTimeline.collection));
        expect(await actual.listParked(consumer.name)).toEqual([]);
        // Each event applied once: directly when it was next, or released from parking.
        expect(consumer.stats.applied + consumer.stats.released).toBe(events.length);
      }),
      { numRuns: 60 },
    );
  });

  it("holds messages past a gap in the journal until the gap fills, then releases them in order", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.nat(), async ({ events, schedule }, pick) => {
        const journal = memoryJournal();
        const consumer = consumerFor(journal, orderTimeline, "sequenced");
        // Hold back one event entirely until the rest was delivered.
        const held = events[pick % events.length] as Envelope;
        await deliver(
          consumer,
          schedule.filter((e) => e.eventId !== held.eventId),
          1,
        );
        const parked = await journal.listParked(consumer.name);
        const laterOfSameOrder = events.filter(
          (e) => e.aggregateId === held.aggregateId && (e.aggregateVersion ?? 0) > (held.aggregateVersion ?? 0),
        );
        expect(parked.map((p) => p.version).sort()).toEqual(laterOfSameOrder.map((e) => e.aggregateVersion).sort());
        await consumer.handle(held);
        expect(await journal.listParked(consumer.name)).toEqual([]);
        const expected = memoryJournal();
        await deliver(consumerFor(expected, orderTimeline, "sequenced"), events, 1);
        expect(await docs(journal, orderTimeline.collection)).toEqual(await docs(expected, orderTimeline.collection));
      }),
      { numRuns: 60 },
    );
  });

  it("a permanent gap raises exactly one alert per stream and calls the reconciliation hook once", async () => {
    await fc.assert(
      fc.asyncProperty(
        scenario,
        fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
        async ({ events, schedule }, picks) => {
          const journal = memoryJournal();
          const clock = new SimulatedClock();
          const calls: GapInfo[] = [];
          const consumer = new Consumer({
            name: "timeline",
            journal,
            handler: orderTimeline,
            mode: "sequenced",
            clock,
            metrics: messagingMetrics(),
            gapTimeoutMs: 60_000,
            reconcile: (gap) => {
              calls.push(gap);
              return { action: "wait" };
            },
          });
          const lost = new Set(picks.map((p) => (events[p % events.length] as Envelope).eventId));
          await deliver(
            consumer,
            schedule.filter((e) => !lost.has(e.eventId)),
            2,
          );
          // Streams with a lost event followed by a delivered one have a permanent gap.
          const gapped = new Set(
            events
              .filter((e) => lost.has(e.eventId))
              .filter((l) =>
                events.some(
                  (e) =>
                    e.aggregateId === l.aggregateId &&
                    !lost.has(e.eventId) &&
                    (e.aggregateVersion ?? 0) > (l.aggregateVersion ?? 0),
                ),
              )
              .map((e) => `orders/${e.aggregateId}`),
          );
          expect(await consumer.checkGaps()).toEqual([]); // not yet past the timeout
          for (let i = 0; i < 3; i++) {
            clock.advance(45_000);
            await consumer.checkGaps();
          }
          const alerts = await consumer.listGapAlerts();
          expect(alerts.map((a) => a.source).sort()).toEqual([...gapped].sort());
          expect(calls.map((c) => c.source).sort()).toEqual([...gapped].sort());
          expect(alerts.every((a) => a.status === "waiting")).toBe(true);
          const metric = await consumer.metrics.registry.getSingleMetric("oncely_gap_alerts_total")?.get();
          expect(metric?.values.reduce((n, v) => n + v.value, 0)).toBe(gapped.size);
        },
      ),
      { numRuns: 40 },
    );
  });
});
