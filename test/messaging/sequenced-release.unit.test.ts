import { describe, expect, it } from "vitest";
import { RetryableError } from "../../src/base/errors.js";
import { sequentialIds } from "../../src/core/clock.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { Consumer } from "../../src/messaging/consumer.js";
import type { ConsumerOptions } from "../../src/messaging/consumer-options.js";
import { DeadLetters, deadLetterBody } from "../../src/messaging/dead-letters.js";
import { decodeEnvelope, type Envelope, encodeEnvelope } from "../../src/messaging/envelope.js";
import { isGapResolved } from "../../src/messaging/gaps.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProjection } from "../../src/messaging/projection.js";
import type { Delivery } from "../../src/messaging/transport.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvent } from "./support/orders.js";

/**
 * A parked version released by the message that filled its gap is handled as its own delivery:
 * its failure is its own (its own dead letter, its own retries), never the releasing message's;
 * the stream holds at its version and the gap is alerted on. Filtered types and events a
 * projection has no key for consume their version. Release and park read one parked row each.
 */
const delivery = (envelope: Envelope, attempt = 1): Delivery => ({
  subject: "orders.x",
  body: encodeEnvelope(envelope),
  messageId: envelope.eventId,
  attempt,
  maxDeliveries: 5,
});

function timeline(failing: { version?: number; error?: (() => Error) | undefined }) {
  return defineProjection<{ versions: number[] }>({
    collection: "timeline",
    key: (e) => e.aggregateId,
    project: (doc, e) => {
      if (failing.version === e.aggregateVersion && failing.error) throw failing.error();
      return { versions: [...(doc?.versions ?? []), e.aggregateVersion as number] };
    },
  });
}

function setup(options: Partial<ConsumerOptions> & { journal?: Journal } = {}) {
  const journal = options.journal ?? memoryJournal();
  const clock = new SimulatedClock();
  const consumer = new Consumer({
    name: "view",
    journal,
    handler: timeline({}),
    mode: "sequenced",
    clock,
    ids: sequentialIds("dl"),
    metrics: messagingMetrics(),
    maxDeliveries: 3,
    gapTimeoutMs: 1_000,
    ...options,
  });
  return { journal, clock, consumer, deadLetters: new DeadLetters(journal, { consumers: [consumer], clock }) };
}

describe("a parked version that fails when released", () => {
  it("becomes its own dead letter, with its own body; the filling message is acked; replay after a fix moves on", async () => {
    const failing: { version?: number; error?: (() => Error) | undefined } = {
      version: 2,
      error: () => new TypeError("bad v2"),
    };
    const { journal, consumer, deadLetters } = setup({ handler: timeline(failing) });
    expect(await consumer.deliver(delivery(orderEvent("o1", 2)))).toEqual({ kind: "ack" });
    expect(await consumer.deliver(delivery(orderEvent("o1", 3)))).toEqual({ kind: "ack" });
    expect(await consumer.deliver(delivery(orderEvent("o1", 1)))).toEqual({ kind: "ack" });
    expect(await journal.getCheckpoint("view", "orders/o1")).toBe(1);
    expect((await journal.listParked("view")).map((p) => p.version)).toEqual([3]);
    const letters = await deadLetters.list();
    expect(letters).toHaveLength(1);
    const [letter] = letters;
    expect(letter?.messageId).toBe(orderEvent("o1", 2).eventId);
    expect(letter?.error).toMatch(/bad v2/);
    expect(decodeEnvelope(deadLetterBody(letter as NonNullable<typeof letter>)).aggregateVersion).toBe(2);
    // The operator fixes the projection and replays the letter: v2 applies and releases v3.
    failing.error = undefined;
    const replayed = await deadLetters.replay(letter?.id as string);
    expect(replayed).toMatchObject({ outcome: "applied", released: 1 });
    expect(await journal.getCheckpoint("view", "orders/o1")).toBe(3);
    expect((await journal.getDocument("timeline", "o1"))?.doc).toEqual({ versions: [1, 2, 3] });
  });

  it("a retryable failure is retried through the releasing message's redeliveries, then succeeds", async () => {
    let failures = 2;
    const failing = { version: 2, error: () => new RetryableError("provider busy") };
    const { journal, consumer, deadLetters } = setup({
      handler: defineProjection<{ versions: number[] }>({
        collection: "timeline",
        key: (e) => e.aggregateId,
        project: (doc, e) => {
          if (e.aggregateVersion === failing.version && failures-- > 0) throw failing.error();
          return { versions: [...(doc?.versions ?? []), e.aggregateVersion as number] };
        },
      }),
    });
    await consumer.deliver(delivery(orderEvent("o1", 2)));
    expect((await consumer.deliver(delivery(orderEvent("o1", 1), 1))).kind).toBe("nak");
    expect(await journal.getCheckpoint("view", "orders/o1")).toBe(1);
    expect((await consumer.deliver(delivery(orderEvent("o1", 1), 2))).kind).toBe("nak");
    expect(await consumer.deliver(delivery(orderEvent("o1", 1), 3))).toEqual({ kind: "ack" });
    expect(await journal.getCheckpoint("view", "orders/o1")).toBe(2);
    expect(await deadLetters.list()).toEqual([]);
  });

  it("a retryable failure that never passes is dead-lettered after maxDeliveries attempts, never the releasing message", async () => {
    const failing = { version: 2, error: () => new RetryableError("still busy") };
    const { journal, consumer, deadLetters } = setup({ handler: timeline(failing) });
    await consumer.deliver(delivery(orderEvent("o1", 2)));
    for (const attempt of [1, 2])
      expect((await consumer.deliver(delivery(orderEvent("o1", 1), attempt))).kind).toBe("nak");
    expect(await consumer.deliver(delivery(orderEvent("o1", 1), 3))).toEqual({ kind: "ack" });
    const letters = await deadLetters.list();
    expect(letters.map((l) => l.messageId)).toEqual([orderEvent("o1", 2).eventId]);
    expect(letters[0]?.attempts).toBe(3);
    expect(await journal.listParked("view")).toEqual([]);
    expect(await journal.getCheckpoint("view", "orders/o1")).toBe(1);
  });

  it("the gap check neither throws nor stops at a failing source; the alert closes once the gap fills", async () => {
    const failing: { version?: number; error?: (() => Error) | undefined } = {
      version: 3,
      error: () => new TypeError("bad v3"),
    };
    const { journal, clock, consumer, deadLetters } = setup({ handler: timeline(failing) });
    // o1: 3 and 4 parked behind a missing 2; o2: 3 parked behind a missing 2.
    for (const [id, v] of [
      ["o1", 1],
      ["o1", 3],
      ["o1", 4],
      ["o2", 1],
      ["o2", 3],
    ] as const) {
      await consumer.deliver(delivery(orderEvent(id, v)));
    }
    clock.advance(2_000);
    const alerts = await consumer.checkGaps();
    expect(alerts.map((a) => a.source).sort()).toEqual(["orders/o1", "orders/o2"]);
    // o1's 2 arrives: 3 fails when released, so o1 holds at 2 with 3 dead-lettered and 4 parked.
    expect(await consumer.deliver(delivery(orderEvent("o1", 2)))).toEqual({ kind: "ack" });
    expect(await journal.getCheckpoint("view", "orders/o1")).toBe(2);
    expect((await deadLetters.list()).map((l) => l.messageId)).toEqual([orderEvent("o1", 3).eventId]);
    await expect(consumer.checkGaps()).resolves.toBeDefined();
    // The first alert of o1 (from 2) is filled; o2's stays open.
    const byFrom = (await consumer.listGapAlerts()).map((a) => [a.source, a.fromVersion, isGapResolved(a.status)]);
    expect(byFrom).toContainEqual(["orders/o1", 2, true]);
    expect(byFrom).toContainEqual(["orders/o2", 2, false]);
  });
});

describe("events a sequenced consumer passes over", () => {
  it("a type outside `types` consumes its version, so the versions behind it are released", async () => {
    const { journal, consumer } = setup({ types: ["OrderPlaced", "ShippingReady"] });
    expect(await consumer.handle(orderEvent("o1", 3))).toEqual({ outcome: "parked", released: 0 });
    expect(await consumer.handle(orderEvent("o1", 1))).toEqual({ outcome: "applied", released: 0 });
    // PaymentProcessed (v2) is filtered out: it advances the checkpoint and releases v3.
    expect(await consumer.handle(orderEvent("o1", 2))).toEqual({ outcome: "ignored", released: 1 });
    expect(await journal.getCheckpoint("view", "orders/o1")).toBe(3);
    expect((await journal.getDocument("timeline", "o1"))?.doc).toEqual({ versions: [1, 3] });
    // A copy of the filtered one is a duplicate, not a conflict.
    expect(await consumer.handle(orderEvent("o1", 2))).toEqual({ outcome: "duplicate", released: 0 });
  });
});

describe("a gap supplied by the reconciliation hook", () => {
  it("is resolved only when the checkpoint passed it; a supply that does not fill it leaves it open, noted", async () => {
    const { consumer, clock } = setup({
      // The hook supplies the wrong aggregate's version 2: nothing fills o1's gap.
      reconcile: () => ({ action: "supply", events: [orderEvent("o9", 2)] }),
    });
    await consumer.handle(orderEvent("o1", 1));
    await consumer.handle(orderEvent("o1", 3));
    clock.advance(2_000);
    await consumer.checkGaps();
    const [alert] = (await consumer.listGapAlerts()).filter((a) => a.source === "orders/o1");
    expect(alert?.status).toBe("open");
    expect(isGapResolved(alert?.status ?? "open")).toBe(false);
    expect(alert?.note).toMatch(/1 event\(s\) supplied, but the checkpoint is still at 1/);
  });

  it("is `supplied` (resolved) when the supplied event filled it", async () => {
    const { consumer, clock, journal } = setup({
      reconcile: () => ({ action: "supply", events: [orderEvent("o1", 2)] }),
    });
    await consumer.handle(orderEvent("o1", 1));
    await consumer.handle(orderEvent("o1", 3));
    clock.advance(2_000);
    await consumer.checkGaps();
    const [alert] = await consumer.listGapAlerts();
    expect(alert?.status).toBe("supplied");
    expect(await journal.getCheckpoint("view", "orders/o1")).toBe(3);
  });
});

describe("parking and releasing a long gap", () => {
  it("reads one parked row per step: no message lists the parked versions of its source", async () => {
    const base = memoryJournal();
    let listings = 0;
    const journal = new Proxy(base, {
      get(target, property, receiver) {
        if (property === "listParked") {
          return (...args: Parameters<Journal["listParked"]>) => {
            listings++;
            return target.listParked(...args);
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const { consumer } = setup({ journal });
    const events = Array.from({ length: 5 }, (_, i) => orderEvent("o1", i + 1));
    for (const event of [...events].reverse()) await consumer.handle(event);
    expect(await base.getCheckpoint("view", "orders/o1")).toBe(5);
    expect(listings).toBe(0);
  });
});
