import { describe, expect, it } from "vitest";
import { CommandRejectedError } from "../../src/base/errors.js";
import { sequentialIds } from "../../src/core/clock.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { DeadLetters } from "../../src/messaging/dead-letters.js";
import { encodeEnvelope } from "../../src/messaging/envelope.js";
import type { ConsumerHandler } from "../../src/messaging/handlers.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProjection } from "../../src/messaging/projection.js";
import type { Delivery } from "../../src/messaging/transport.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvent, orderTimeline, perEventCount } from "./support/orders.js";

const delivery = (body: string, attempt = 1, maxDeliveries = 3): Delivery => ({
  subject: "shop.orders.X",
  body,
  messageId: undefined,
  attempt,
  maxDeliveries,
});

function setup(handler: ConsumerHandler = perEventCount, mode: "facts" | "sequenced" = "facts") {
  const journal = memoryJournal();
  const clock = new SimulatedClock();
  const consumer = new Consumer({
    name: "view",
    journal,
    handler,
    mode,
    clock,
    ids: sequentialIds("dl"),
    metrics: messagingMetrics(),
    maxDeliveries: 3,
  });
  return { journal, clock, consumer, deadLetters: new DeadLetters(journal, { consumers: [consumer], clock }) };
}

describe("dead letters", () => {
  it("stores an unparseable message with its error and acks it, and the consumer keeps going", async () => {
    const { journal, consumer, deadLetters } = setup();
    expect(await consumer.deliver(delivery("{not json"))).toEqual({ kind: "ack" });
    expect(await consumer.deliver(delivery(JSON.stringify({ eventId: "x" })))).toEqual({ kind: "ack" });
    expect(await consumer.deliver(delivery(encodeEnvelope(orderEvent("o1", 1))))).toEqual({ kind: "ack" });
    const letters = await deadLetters.list({ status: "open" });
    expect(letters).toHaveLength(2);
    expect(letters[0]).toMatchObject({ consumer: "view", messageId: null, attempts: 1, status: "open" });
    expect(letters[0]?.error).toMatch(/not JSON/);
    expect(letters[1]?.error).toMatch(/type/);
    expect(letters[0]?.stack).toMatch(/InvalidInputError/);
    expect((await journal.getDocument(perEventCount.collection, "o1:OrderPlaced"))?.doc).toMatchObject({ count: 1 });
  });

  it("retries a failing handler with backoff, dead-letters on the last delivery, and replay applies once", async () => {
    let failing = true;
    const flaky = defineProjection<{ count: number }>({
      collection: "flaky",
      key: (e) => e.eventId,
      project(doc) {
        if (failing) throw new Error("database of the read model is down");
        return { count: (doc?.count ?? 0) + 1 };
      },
    });
    const { journal, clock, consumer, deadLetters } = setup(flaky);
    const body = encodeEnvelope(orderEvent("o1", 2));
    const first = await consumer.deliver(delivery(body, 1));
    expect(first.kind).toBe("nak");
    clock.advance(500);
    expect((await consumer.deliver(delivery(body, 2))).kind).toBe("nak");
    clock.advance(500);
    expect(await consumer.deliver(delivery(body, 3))).toEqual({ kind: "ack" });
    const [letter] = await deadLetters.list();
    expect(letter).toMatchObject({
      id: "view|o1:PaymentProcessed",
      attempts: 3,
      error: "database of the read model is down",
    });
    expect(letter?.lastFailedAt).toBeGreaterThan(letter?.firstFailedAt ?? Number.POSITIVE_INFINITY);

    failing = false;
    expect((await deadLetters.replay(letter?.id as string)).outcome).toBe("applied");
    expect((await journal.getDocument("flaky", "o1:PaymentProcessed"))?.doc).toEqual({ count: 1 });
    expect((await deadLetters.show(letter?.id as string)).status).toBe("replayed");
    await expect(deadLetters.replay(letter?.id as string)).rejects.toThrow(/already replayed/);
  });

  it("dead-letters a terminal error at once, without retries", async () => {
    const rejecting = defineProjection<unknown>({
      collection: "x",
      key: (e) => e.eventId,
      project() {
        throw new CommandRejectedError("order 7 does not exist here");
      },
    });
    const { deadLetters, consumer } = setup(rejecting);
    expect(await consumer.deliver(delivery(encodeEnvelope(orderEvent("o7", 1)), 1))).toEqual({ kind: "ack" });
    expect(await deadLetters.list()).toHaveLength(1);
  });

  it("replay of a message applied meanwhile is suppressed by the inbox", async () => {
    let failing = true;
    const flaky = defineProjection<{ count: number }>({
      collection: "flaky",
      key: (e) => e.eventId,
      project(doc) {
        if (failing) throw new Error("boom");
        return { count: (doc?.count ?? 0) + 1 };
      },
    });
    const { journal, consumer, deadLetters } = setup(flaky);
    const event = orderEvent("o1", 1);
    // Three failures in this process use up its budget of three deliveries: dead-lettered.
    for (const attempt of [1, 2, 3]) await consumer.deliver(delivery(encodeEnvelope(event), attempt));
    failing = false;
    await consumer.handle(event); // the producer published it again, and it worked
    const [letter] = await deadLetters.list();
    expect((await deadLetters.replay(letter?.id as string)).outcome).toBe("duplicate");
    expect((await journal.getDocument("flaky", event.eventId))?.doc).toEqual({ count: 1 });
  });

  it("replay of a sequenced message ahead of a gap parks it, and discard keeps it for audit", async () => {
    const { journal, consumer, deadLetters } = setup(orderTimeline, "sequenced");
    const v3 = orderEvent("o1", 3);
    // A sequenced event without a version is dead-lettered (terminal).
    const { aggregateVersion: _v, ...unversioned } = orderEvent("o2", 1);
    await consumer.deliver(delivery(JSON.stringify(unversioned)));
    const [bad] = await deadLetters.list();
    expect(bad?.error).toMatch(/without aggregateVersion/);
    await deadLetters.discard(bad?.id as string);
    expect((await deadLetters.show(bad?.id as string)).status).toBe("discarded");

    await journal.commit({
      deadLetters: [
        {
          id: "manual",
          consumer: "view",
          messageId: v3.eventId,
          payload: { subject: "s", body: encodeEnvelope(v3), envelope: v3 },
          error: "x",
          stack: null,
          attempts: 5,
          firstFailedAt: 1,
          lastFailedAt: 2,
        },
      ],
      now: 3,
    });
    expect((await deadLetters.replay("manual")).outcome).toBe("parked");
    expect((await journal.listParked("view")).map((p) => p.version)).toEqual([3]);
    await consumer.handle(orderEvent("o1", 1));
    await consumer.handle(orderEvent("o1", 2));
    expect(await journal.listParked("view")).toEqual([]);
    expect((await journal.getDocument(orderTimeline.collection, "o1"))?.doc).toEqual({
      timeline: ["1:OrderPlaced", "2:PaymentProcessed", "3:ShippingReady"],
    });
  });
});
