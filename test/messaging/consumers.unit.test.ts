import { describe, expect, it } from "vitest";
import { MessageConflictError } from "../../src/base/errors.js";
import { defineActor } from "../../src/core/actor.js";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import type { Envelope } from "../../src/messaging/envelope.js";
import { GAP_ALERTS } from "../../src/messaging/gaps.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProcessManager } from "../../src/messaging/process-manager.js";
import { eventsFromOutbox, rebuildProjection } from "../../src/messaging/projection.js";
import { Relay } from "../../src/messaging/relay.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvent, orderEvents, orderFacts, orderTimeline, producer } from "./support/orders.js";

const fulfilment = defineProcessManager<{ shippingRequested: boolean }, { type: "ShippingRequested" }>({
  type: "fulfilment",
  correlate: (e) => (e.type === "PaymentProcessed" ? e.correlationId : undefined),
  initialState: () => ({ shippingRequested: false }),
  evolve: () => ({ shippingRequested: true }),
  react: (state, _e, ctx) =>
    state.shippingRequested
      ? {}
      : {
          events: [{ type: "ShippingRequested" }],
          send: [
            { to: `shipping/${ctx.id}`, id: `fulfilment:${ctx.id}:start-shipping`, command: { type: "StartShipping" } },
          ],
        },
});

describe("command handlers and process managers", () => {
  it("turns PaymentProcessed into one StartShipping outbox message, however often it arrives", async () => {
    const journal = memoryJournal();
    const runtime = createRuntime({ journal, actors: [fulfilment.actor], ids: sequentialIds("e") });
    const consumer = new Consumer({
      name: "fulfilment",
      journal,
      handler: fulfilment.route,
      runtime,
      metrics: messagingMetrics(),
    });
    const paid = orderEvent("o1", 2);
    expect((await consumer.handle(paid)).outcome).toBe("applied");
    expect((await consumer.handle(paid)).outcome).toBe("duplicate");
    expect((await consumer.handle({ ...paid, eventId: "republished-under-new-id" })).outcome).toBe("applied");
    expect((await consumer.handle(orderEvent("o1", 1))).outcome).toBe("ignored");
    const rows = await journal.listOutbox({ category: "message" });
    expect(rows.map((r) => [r.id, r.stream, (r.payload as { to: string }).to])).toEqual([
      ["fulfilment:o1:start-shipping", "fulfilment/o1", "shipping/o1"],
    ]);
    expect((await journal.readStream("fulfilment/o1")).map((e) => e.type)).toEqual(["ShippingRequested"]);
  });

  it("sequenced command routing sends in version order and advances the checkpoint", async () => {
    const journal = memoryJournal();
    const seen: number[] = [];
    const mirror = defineActor<null, { type: "Apply"; version: number }, { type: "Applied"; version: number }>({
      type: "mirror",
      initialState: () => null,
      evolve: (s) => s,
      decide: (c) => {
        if (c.type !== "Apply") return {};
        seen.push(c.version);
        return { events: [{ type: "Applied", version: c.version }] };
      },
    });
    const runtime = createRuntime({ journal, actors: [mirror], ids: sequentialIds("e") });
    const consumer = new Consumer({
      name: "mirror",
      journal,
      mode: "sequenced",
      runtime,
      metrics: messagingMetrics(),
      handler: {
        kind: "command",
        route: (e) => ({ address: `mirror/${e.aggregateId}`, command: { type: "Apply", version: e.aggregateVersion } }),
      },
    });
    for (const v of [3, 1, 4, 2, 2, 5]) await consumer.handle(orderEvent("o1", v));
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(await journal.getCheckpoint("mirror", "orders/o1")).toBe(5);
  });

  it("decides a command the route says starts its actor without reading the actor, and lands it once whatever the guess", async () => {
    const inner = memoryJournal();
    let reads = 0;
    // Every read a waking actor makes, counted.
    const journal = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== "readFromSnapshot" && key !== "readStream" && key !== "latestSnapshot") return value;
        return (...args: unknown[]) => {
          reads++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const counter = defineActor<{ n: number }, { type: "Count" }, { type: "Counted"; n: number }>({
      type: "tally",
      initialState: () => ({ n: 0 }),
      evolve: (_s, e) => ({ n: e.n }),
      decide: (_c, s) => ({ events: [{ type: "Counted", n: s.n + 1 }] }),
    });
    const runtime = createRuntime({ journal, actors: [counter], ids: sequentialIds("e") });
    const consumer = new Consumer({
      name: "tally",
      journal,
      runtime,
      metrics: messagingMetrics(),
      handler: {
        kind: "command",
        route: (e) => ({ address: `tally/${e.aggregateId}`, command: { type: "Count" }, expectNew: true }),
      },
    });
    const first = orderEvent("o1", 1);
    expect((await consumer.handle(first)).outcome).toBe("applied");
    expect(reads).toBe(0);
    // The same event again: the inbox answers it, nothing lands twice.
    runtime.evict();
    expect((await consumer.handle(first)).outcome).toBe("duplicate");
    // Another event guessed new for an actor that has events: decided again on its stored state.
    runtime.evict();
    expect((await consumer.handle(orderEvent("o1", 2))).outcome).toBe("applied");
    expect((await inner.readStream("tally/o1")).map((e) => (e.data as { n: number }).n)).toEqual([1, 2]);
  });
});

describe("gap reconciliation", () => {
  function sequenced(reconcile: ConstructorParameters<typeof Consumer>[0]["reconcile"]) {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const consumer = new Consumer({
      name: "timeline",
      journal,
      handler: orderTimeline,
      mode: "sequenced",
      clock,
      gapTimeoutMs: 10_000,
      metrics: messagingMetrics(),
      ...(reconcile ? { reconcile } : {}),
    });
    return { journal, clock, consumer };
  }

  it("supply: the hook fetches the missing events; they go through the normal path and release the rest", async () => {
    const { journal, clock, consumer } = sequenced((gap) => ({
      action: "supply",
      events: [orderEvent("o1", gap.fromVersion), orderEvent("o1", gap.toVersion)],
    }));
    await consumer.handle(orderEvent("o1", 1));
    await consumer.handle(orderEvent("o1", 4));
    await consumer.handle(orderEvent("o1", 5));
    clock.advance(10_000);
    const [alert] = await consumer.checkGaps();
    expect(alert).toMatchObject({ source: "orders/o1", fromVersion: 2, toVersion: 3, parkedVersions: [4, 5] });
    expect((await journal.getDocument(orderTimeline.collection, "o1"))?.doc).toEqual({
      timeline: ["1:OrderPlaced", "2:PaymentProcessed", "3:ShippingReady", "4:OrderShipped", "5:OrderDelivered"],
    });
    expect((await consumer.listGapAlerts())[0]).toMatchObject({ status: "supplied" });
  });

  it("skip: the checkpoint moves past the gap, recorded on the alert, and parked events are released", async () => {
    const { journal, clock, consumer } = sequenced(() => ({ action: "skip" }));
    await consumer.handle(orderEvent("o1", 3));
    clock.advance(10_000);
    await consumer.checkGaps();
    expect(await journal.getCheckpoint("timeline", "orders/o1")).toBe(3);
    expect(await journal.listParked("timeline")).toEqual([]);
    const [alert] = await journal.listDocuments(GAP_ALERTS);
    expect(alert?.doc).toMatchObject({ status: "skipped", note: "versions 1..2 skipped" });
    // A skipped event arriving late does not rewrite history, and is not dropped silently either:
    // it is a version conflict (the deliver path dead-letters it with reason "conflict").
    await expect(consumer.handle(orderEvent("o1", 1))).rejects.toBeInstanceOf(MessageConflictError);
  });

  it("watchGaps checks in the background on the injected clock", async () => {
    const calls: string[] = [];
    const { clock, consumer } = sequenced((gap) => {
      calls.push(gap.source);
      return { action: "wait" };
    });
    await consumer.handle(orderEvent("o9", 3));
    const stop = consumer.watchGaps(5_000);
    for (let i = 0; i < 4; i++) {
      clock.advance(5_000);
      for (let j = 0; j < 20; j++) await new Promise((r) => setImmediate(r));
    }
    stop();
    expect(calls).toEqual(["orders/o9"]);
    expect((await consumer.listGapAlerts()).map((a) => a.status)).toEqual(["waiting"]);
  });

  it("a gap filled by arrival after its alert is marked filled; a failing hook is recorded", async () => {
    const { clock, consumer } = sequenced(() => {
      throw new Error("producer API down");
    });
    await consumer.handle(orderEvent("o1", 2));
    clock.advance(10_000);
    await consumer.checkGaps();
    expect((await consumer.listGapAlerts())[0]).toMatchObject({ status: "hook-failed", note: "producer API down" });
    await consumer.handle(orderEvent("o1", 1));
    await consumer.checkGaps();
    expect((await consumer.listGapAlerts())[0]).toMatchObject({ status: "filled" });
  });
});

describe("projection rebuild", () => {
  it("clears the collection and rebuilds from the journal's event outbox to the live result", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const runtime = createRuntime({ journal, actors: [producer], clock, ids: sequentialIds("e") });
    for (const id of ["a", "b"]) {
      for (const t of ["OrderPlaced", "PaymentProcessed", "OrderShipped"]) {
        await runtime.send(`producer/${id}`, { type: "Record", event: t });
      }
    }
    const transport = new InProcessTransport({ clock });
    const live = new Consumer({ name: "facts", journal, handler: orderFacts, clock, metrics: messagingMetrics() });
    const sub = await live.subscribe(transport, { subjects: ["shop.>"] });
    await new Relay({ journal, transport, clock, subjectPrefix: "shop", metrics: messagingMetrics() }).drain();
    await transport.idle();
    await sub.stop();
    const before = await orderFacts.readAll(journal);
    expect(before.map((d) => d.view.status)).toEqual(["Shipped", "Shipped"]);

    // Corrupt the read model, then rebuild.
    await journal.commit({
      documents: [{ collection: orderFacts.collection, id: "zzz", doc: { junk: true } }],
      now: 1,
    });
    const events: Envelope[] = await eventsFromOutbox(journal);
    const result = await rebuildProjection({ journal, name: "facts", projection: orderFacts, events, clock });
    expect(result.handled).toBe(6);
    expect(await orderFacts.readAll(journal)).toEqual(before);
  });

  it("rebuilds a sequenced projection from a supplied, shuffled list", async () => {
    const journal = memoryJournal();
    const events = orderEvents([3, 2]);
    const shuffled = [events[4], events[2], events[0], events[3], events[1]] as Envelope[];
    await rebuildProjection({ journal, name: "t", projection: orderTimeline, events: shuffled, mode: "sequenced" });
    expect((await journal.getDocument(orderTimeline.collection, "o1"))?.doc).toEqual({
      timeline: ["1:OrderPlaced", "2:PaymentProcessed", "3:ShippingReady"],
    });
  });
});
