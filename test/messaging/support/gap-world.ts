import { memoryJournal } from "../../../src/journal/memory.js";
import { Consumer } from "../../../src/messaging/consumer.js";
import { messagingMetrics } from "../../../src/messaging/metrics.js";
import { defineProjection } from "../../../src/messaging/projection.js";
import { SimulatedClock } from "../../../src/testing/clock.js";
import { orderEvent } from "./orders.js";

/** Each order's versions in the order they were applied: a gap closed out of order would show. */
export const versionsTimeline = defineProjection<{ versions: number[] }>({
  collection: "timeline",
  key: (e) => e.aggregateId,
  project: (doc, e) => ({ versions: [...(doc?.versions ?? []), e.aggregateVersion as number] }),
});

/** A sequenced consumer `view` of `versionsTimeline` on a memory journal, with nothing handled yet. */
export function sequencedView() {
  const journal = memoryJournal();
  const clock = new SimulatedClock();
  const consumer = new Consumer({
    name: "view",
    journal,
    handler: versionsTimeline,
    mode: "sequenced",
    clock,
    metrics: messagingMetrics(),
    gapTimeoutMs: 1_000,
  });
  const versions = async (id = "o1") =>
    ((await journal.getDocument("timeline", id))?.doc as { versions: number[] } | undefined)?.versions ?? [];
  return { journal, clock, consumer, versions, start: clock.now() };
}

/** The same with versions 2..3 of orders/o1 missing: 1 applied, 4 and 5 parked, the gap alerted on. */
export async function viewWithGap() {
  const view = sequencedView();
  for (const v of [1, 4, 5]) await view.consumer.handle(orderEvent("o1", v));
  view.clock.advance(5_000);
  await view.consumer.checkGaps();
  return view;
}
