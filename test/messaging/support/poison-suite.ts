import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sequentialIds } from "../../../src/core/clock.js";
import type { Journal } from "../../../src/journal/types.js";
import { Consumer } from "../../../src/messaging/consumer.js";
import { type DeadLetterPayload, DeadLetters, deadLetterBody } from "../../../src/messaging/dead-letters.js";
import { type Envelope, encodeEnvelope } from "../../../src/messaging/envelope.js";
import type { ConsumerHandler } from "../../../src/messaging/handlers.js";
import { messagingMetrics } from "../../../src/messaging/metrics.js";
import { defineProjection } from "../../../src/messaging/projection.js";
import type { Delivery } from "../../../src/messaging/transport.js";
import { SimulatedClock } from "../../../src/testing/clock.js";
import { orderEvent, orderTimeline, perEventCount } from "./orders.js";

const NUL = "\u0000";

/** First delivery of a body: every poison message must be dealt with on it, no retry. */
const first = (body: string, messageId?: string): Delivery => ({
  subject: "shop.orders.X",
  body,
  messageId,
  attempt: 1,
  maxDeliveries: 5,
});

/** Hostile variants of a valid event, cycling through NUL and unpaired surrogates in ids and payloads. */
function poison(i: number): { body: string; messageId?: string } {
  const base = orderEvent(`p${i}`, 1);
  switch (i % 5) {
    case 0:
      return {
        body: encodeEnvelope({ ...base, eventId: `${base.eventId}${NUL}` }),
        messageId: `${base.eventId}${NUL}`,
      };
    case 1:
      return { body: encodeEnvelope({ ...base, payload: { orderId: `p${i}`, sku: `x${NUL}y` } }) };
    case 2:
      return { body: encodeEnvelope({ ...base, payload: { orderId: `p${i}`, note: "\uD83D lone" } }) };
    case 3:
      return { body: encodeEnvelope({ ...base, aggregateId: `p${i}\uDC00`, payload: { [`k${NUL}`]: 1 } }) };
    default:
      // A raw NUL inside the JSON text, outside any string: not JSON at all.
      return { body: `${encodeEnvelope(base).slice(0, -1)}${NUL}}` };
  }
}

/** A projection whose handler turns storable input into text no store can hold (bypassing the envelope check). */
const nulWriter = defineProjection<{ note: string }>({
  collection: "nul-writer",
  key: (e) => e.aggregateId,
  project: (_doc, e) => ({ note: `${e.eventId}${NUL}` }),
});

/** Knows only the lifecycle's first two types: anything else has no key. */
const picky = defineProjection<{ timeline: string[] }>({
  collection: "picky-timeline",
  key: (e) => (e.type === "OrderPlaced" || e.type === "PaymentProcessed" ? e.aggregateId : undefined),
  project: (doc, e) => ({ timeline: [...(doc?.timeline ?? []), `${e.aggregateVersion}:${e.eventId}`] }),
});

export interface PoisonSubject {
  journal: Journal;
  close: () => Promise<void>;
}

/**
 * Poison messages and conflicts through a real consumer on one back end. Run on memory, SQLite
 * and PostgreSQL: the same rules must hold on each.
 */
export function poisonSuite(label: string, open: () => Promise<PoisonSubject>, flood = 1_000): void {
  describe(`poison messages and conflicts: ${label}`, () => {
    let subject: PoisonSubject;
    let journal: Journal;
    beforeEach(async () => {
      subject = await open();
      journal = subject.journal;
    });
    afterEach(async () => {
      await subject.close();
    });

    const setup = (handler: ConsumerHandler, mode: "facts" | "sequenced" = "facts") => {
      const clock = new SimulatedClock();
      const metrics = messagingMetrics();
      const consumer = new Consumer({
        name: "view",
        journal,
        handler,
        mode,
        clock,
        ids: sequentialIds("dl"),
        metrics,
        maxDeliveries: 5,
      });
      return { consumer, metrics, deadLetters: new DeadLetters(journal, { consumers: [consumer], clock }) };
    };
    const conflicts = async (metrics: ReturnType<typeof messagingMetrics>) =>
      (await metrics.conflicts.get()).values.reduce((sum, v) => sum + v.value, 0);

    it(`dead-letters a flood of ${flood} NUL / unpaired-surrogate messages on their first delivery, then handles a normal one`, async () => {
      const { consumer, deadLetters } = setup(perEventCount);
      const bodies: string[] = [];
      for (let i = 0; i < flood; i++) {
        const { body, messageId } = poison(i);
        bodies.push(body);
        expect(await consumer.deliver(first(body, messageId))).toEqual({ kind: "ack" });
      }
      const normal = orderEvent("after-flood", 1);
      expect(await consumer.deliver(first(encodeEnvelope(normal)))).toEqual({ kind: "ack" });
      expect((await journal.getDocument(perEventCount.collection, normal.eventId))?.doc).toEqual({
        count: 1,
        type: "OrderPlaced",
      });
      const letters = await deadLetters.list({ status: "open", limit: flood + 10 });
      expect(letters).toHaveLength(flood);
      expect(letters.every((l) => l.attempts === 1)).toBe(true);
      // Every letter gives back the message exactly as it arrived, NULs and lone surrogates included.
      expect(new Set(letters.map(deadLetterBody))).toEqual(new Set(bodies));
      expect(consumer.stats.deadLetters).toBe(flood);
    });

    it("names the offending field, keeps the original message id, and shows the body faithfully", async () => {
      const { consumer, deadLetters } = setup(perEventCount);
      const base = orderEvent("o1", 1);
      const eventId = `${base.eventId}${NUL}`;
      const body = encodeEnvelope({ ...base, eventId, payload: { lines: [{ sku: "a\uDC00" }] } });
      expect(await consumer.deliver(first(body, eventId))).toEqual({ kind: "ack" });
      const [letter] = await deadLetters.list();
      expect(letter?.messageId).toBe(eventId);
      expect(letter?.error).toMatch(/eventId: must not contain NUL/);
      expect(letter?.error).toMatch(
        /payload\.lines\.0\.sku: must not contain an unpaired UTF-16 surrogate \(U\+DC00\)/,
      );
      const shown = await deadLetters.show(letter?.id as string);
      expect((shown.payload as DeadLetterPayload).body).toBe(body);
      expect((shown.payload as DeadLetterPayload).reason).toBe("invalid");
    });

    it("treats text a handler makes unstorable as terminal: one attempt, then a dead letter", async () => {
      const { consumer, deadLetters } = setup(nulWriter);
      const event = orderEvent("o1", 1);
      expect(await consumer.deliver(first(encodeEnvelope(event)))).toEqual({ kind: "ack" });
      const [letter] = await deadLetters.list();
      expect(letter).toMatchObject({ messageId: event.eventId, attempts: 1 });
      expect(letter?.stack).toMatch(/TerminalStorageError/);
      expect(await journal.getDocument(nulWriter.collection, "o1")).toBeUndefined();
    });

    it("records the same eventId with other content as a conflict holding both; an exact copy stays silent", async () => {
      const { consumer, deadLetters, metrics } = setup(perEventCount);
      const event = orderEvent("o1", 1);
      const forged: Envelope = { ...event, payload: { orderId: "o1", amount: 1_000_000 } };
      expect(await consumer.deliver(first(encodeEnvelope(event)))).toEqual({ kind: "ack" });
      expect(await consumer.deliver(first(encodeEnvelope(event)))).toEqual({ kind: "ack" });
      expect(await deadLetters.list()).toEqual([]);
      expect(await consumer.deliver(first(encodeEnvelope(forged)))).toEqual({ kind: "ack" });
      const [letter] = await deadLetters.list();
      const payload = letter?.payload as DeadLetterPayload;
      expect(payload.reason).toBe("conflict");
      expect(payload.envelope).toEqual(forged);
      expect(payload.conflict).toMatchObject({ kind: "payload", held: { envelope: event } });
      expect(letter?.error).toMatch(/already handled with other content/);
      expect(await conflicts(metrics)).toBe(1);
      // Applied once, with the first content.
      expect((await journal.getDocument(perEventCount.collection, event.eventId))?.doc).toMatchObject({ count: 1 });
    });

    it("records another eventId at an applied or parked version as a conflict; the held one keeps it", async () => {
      const { consumer, deadLetters, metrics } = setup(orderTimeline, "sequenced");
      const v1 = orderEvent("o1", 1);
      const v3 = orderEvent("o1", 3);
      await consumer.deliver(first(encodeEnvelope(v1)));
      expect(await consumer.deliver(first(encodeEnvelope({ ...v1, eventId: "forged-v1" })))).toEqual({ kind: "ack" });
      await consumer.deliver(first(encodeEnvelope(v3)));
      expect(await consumer.deliver(first(encodeEnvelope({ ...v3, eventId: "forged-v3" })))).toEqual({ kind: "ack" });
      await consumer.deliver(first(encodeEnvelope(orderEvent("o1", 2))));

      const letters = await deadLetters.list();
      expect(letters.map((l) => [l.messageId, (l.payload as DeadLetterPayload).reason])).toEqual([
        ["forged-v1", "conflict"],
        ["forged-v3", "conflict"],
      ]);
      expect(letters[1]?.error).toMatch(/version 3 of orders\/o1, already parked from event "o1:ShippingReady"/);
      expect(await conflicts(metrics)).toBe(2);
      expect(await journal.getCheckpoint("view", "orders/o1")).toBe(3);
      expect((await journal.getDocument(orderTimeline.collection, "o1"))?.doc).toEqual({
        timeline: ["1:OrderPlaced", "2:PaymentProcessed", "3:ShippingReady"],
      });
    });

    it("consumes the version of an event its projection passes over (no key): the sequence moves on", async () => {
      const { consumer, deadLetters } = setup(picky, "sequenced");
      const placed = orderEvent("o1", 1);
      const passedOver: Envelope = { ...orderEvent("o1", 2), eventId: "o1:Mystery", type: "Mystery" };
      const paid: Envelope = { ...orderEvent("o1", 3), eventId: "o1:PaymentProcessed", type: "PaymentProcessed" };
      // Out of order: 3 parks behind 2, which the projection has no key for; 2 must release 3.
      expect(await consumer.deliver(first(encodeEnvelope(paid)))).toEqual({ kind: "ack" });
      expect(await consumer.deliver(first(encodeEnvelope(placed)))).toEqual({ kind: "ack" });
      expect(await consumer.deliver(first(encodeEnvelope(passedOver)))).toEqual({ kind: "ack" });
      expect(await journal.getCheckpoint("view", "orders/o1")).toBe(3);
      expect(await journal.listParked("view")).toEqual([]);
      expect(await deadLetters.list()).toEqual([]);
      expect((await journal.getDocument(picky.collection, "o1"))?.doc).toEqual({
        timeline: ["1:o1:OrderPlaced", "3:o1:PaymentProcessed"],
      });
      expect(consumer.stats.ignored).toBe(1);
      // Another event at the version it consumed is a conflict, never applied over it.
      const forged: Envelope = { ...orderEvent("o1", 2), eventId: "forged:2" };
      expect(await consumer.deliver(first(encodeEnvelope(forged)))).toEqual({ kind: "ack" });
      const [letter] = await deadLetters.list();
      expect((letter?.payload as DeadLetterPayload | undefined)?.reason).toBe("conflict");
    });
  });
}
