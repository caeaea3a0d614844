import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/core/clock.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { PUBLISHED_READER_SOURCE } from "../../src/journal/published.js";
import type { Journal } from "../../src/journal/types.js";
import { COLLECTION_OWNERS, CollectionOwnedError, retireConsumer } from "../../src/messaging/collection-owners.js";
import { Consumer } from "../../src/messaging/consumer.js";
import type { OrderingMode } from "../../src/messaging/consumer-options.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { rebuildProjection } from "../../src/messaging/projection.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { PublishedRetention } from "../../src/retention/published.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvents, orderTimeline } from "./support/orders.js";

/**
 * A rebuild hands its position to the live consumer (what it handled is that consumer's), so the
 * live consumer's backlog is never applied twice; documents belong to one consumer, so a renamed
 * consumer cannot silently re-apply everything on top; a retired consumer holds nothing back.
 */
const clock = new SimulatedClock();
const live = (journal: Journal, name = "timeline", mode: OrderingMode = "sequenced") =>
  new Consumer({
    name,
    journal,
    handler: orderTimeline,
    mode,
    clock,
    ids: sequentialIds(name),
    metrics: messagingMetrics(),
  });

const timelineOf = async (journal: Journal, id: string) =>
  ((await journal.getDocument(orderTimeline.collection, id))?.doc as { timeline: string[] } | undefined)?.timeline;

describe("rebuilding a projection", () => {
  for (const mode of ["sequenced", "facts"] as OrderingMode[]) {
    it(`${mode}: the live consumer's backlog after the rebuild is duplicates, never applied twice`, async () => {
      const journal = memoryJournal();
      const events = orderEvents([5, 3]);
      const consumer = live(journal, "timeline", mode);
      // The live consumer handled part of the stream when it was stopped (a crash mid-load).
      for (const event of events.slice(0, 4)) await consumer.handle(event);
      const result = await rebuildProjection({
        journal,
        name: "timeline",
        projection: orderTimeline,
        events,
        mode,
        clock,
      });
      expect(result).toMatchObject({ handled: 8, consumer: "timeline" });
      const rebuilt = [await timelineOf(journal, "o1"), await timelineOf(journal, "o2")];
      expect(rebuilt[0]).toHaveLength(5);
      // Restarted, the live consumer gets its backlog (and more copies) again.
      const restarted = live(journal, "timeline", mode);
      for (const event of events.slice(2)) {
        expect((await restarted.handle(event)).outcome).toBe("duplicate");
      }
      expect([await timelineOf(journal, "o1"), await timelineOf(journal, "o2")]).toEqual(rebuilt);
    });
  }

  it("a rebuild that stopped half way leaves the collection refused to the live consumer until one finishes", async () => {
    const journal = memoryJournal();
    const events = orderEvents([3]);
    const failing = (async function* () {
      yield events[0] as (typeof events)[number];
      throw new Error("rebuild source lost");
    })();
    await expect(
      rebuildProjection({ journal, name: "timeline", projection: orderTimeline, events: failing, clock }),
    ).rejects.toThrow(/rebuild source lost/);
    await expect(live(journal).handle(events[1] as (typeof events)[number])).rejects.toBeInstanceOf(
      CollectionOwnedError,
    );
    await rebuildProjection({ journal, name: "timeline", projection: orderTimeline, events, clock, mode: "sequenced" });
    expect((await live(journal).handle(events[2] as (typeof events)[number])).outcome).toBe("duplicate");
  });
});

describe("who writes a collection", () => {
  it("a consumer of another name is refused, at subscribe and on handling, with what to do", async () => {
    const journal = memoryJournal();
    const [first, second] = orderEvents([2]) as [
      ReturnType<typeof orderEvents>[number],
      ReturnType<typeof orderEvents>[number],
    ];
    await live(journal, "timeline").handle(first);
    const renamed = live(journal, "timeline-v2");
    const error = await renamed.handle(second).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CollectionOwnedError);
    expect((error as Error).message).toMatch(
      /written by consumer "timeline", so consumer "timeline-v2" may not write it/,
    );
    await expect(renamed.subscribe(new InProcessTransport(), { subjects: ["shop.>"] })).rejects.toBeInstanceOf(
      CollectionOwnedError,
    );
    // Nothing was applied twice.
    expect(await timelineOf(journal, "o1")).toEqual(["1:OrderPlaced"]);
  });

  it("a retired consumer gives its collections up and no longer holds back the published log's retention", async () => {
    const journal = memoryJournal();
    const [event] = orderEvents([1]);
    await live(journal, "timeline").handle(event as NonNullable<typeof event>);
    for (let i = 1; i <= 3; i++)
      await journal.appendPublished({ messageId: `m${i}`, subject: "shop.x", body: "{}" }, 1);
    await journal.commit({ checkpoint: { consumer: "timeline", source: PUBLISHED_READER_SOURCE, version: 1 }, now: 1 });
    await journal.commit({ checkpoint: { consumer: "ledger", source: PUBLISHED_READER_SOURCE, version: 3 }, now: 1 });
    const retention = new PublishedRetention({ journal, clock, retentionMs: 1 });
    clock.advance(10);
    expect(await retention.runOnce()).toBe(1); // pinned at the old reader's position
    const retired = await retireConsumer(journal, "timeline", clock.now());
    expect(retired.collections).toEqual([orderTimeline.collection]);
    expect(await journal.getDocument(COLLECTION_OWNERS, orderTimeline.collection)).toBeUndefined();
    expect(await journal.getCheckpoint("timeline", PUBLISHED_READER_SOURCE)).toBe(0);
    expect(await journal.getInbox("timeline", (event as NonNullable<typeof event>).eventId)).toBeUndefined();
    expect(await retention.runOnce()).toBe(2); // no longer pinned
    // The documents stay; the new name may write them now.
    expect(await timelineOf(journal, "o1")).toEqual(["1:OrderPlaced"]);
    await expect(
      live(journal, "timeline-v2").subscribe(new InProcessTransport(), { subjects: ["shop.>"] }),
    ).resolves.toBeDefined();
  });
});
