import { Consumer, DeadLetters, type Envelope, InvalidInputError, messagingMetrics } from "oncely";
import { encodeEnvelope } from "oncely/advanced";
import { memoryJournal, SimulatedClock, sequentialIds } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { fulfillment } from "../fulfillment/process.js";
import { orderingRoute } from "../ordering/integration.js";
import { paymentRoute } from "../payment/actor.js";
import { orderFacts, orderTimeline } from "../views/order-views.js";
import { orderIdSchema } from "./order-id.js";

const event = (type: string, source: string, orderId: string, payload: object): Envelope => ({
  eventId: `${source}:${orderId}:${type}`,
  type,
  source,
  aggregateId: orderId,
  aggregateVersion: 1,
  occurredAt: "2026-01-01T00:00:00.000Z",
  correlationId: orderId,
  causationId: "c",
  payload: { orderId, ...payload },
});
const placed = (orderId: string) =>
  event("OrderPlaced", "ordering", orderId, {
    currency: "EUR",
    amount: 100,
    lines: [{ sku: "book", quantity: 1, unitPrice: 100 }],
  });
const processed = (orderId: string) =>
  event("PaymentProcessed", "payment", orderId, { paymentId: "pay_1", amount: 100, currency: "EUR" });

const HOSTILE = ["__proto__", "constructor", "toString", "hasOwnProperty", "../order", "a b", ""];

describe("order ids on the bus have the shop's format", () => {
  it("accepts the shop's ids and refuses names every object carries, paths and blanks", () => {
    for (const ok of ["ord_0123456789abcdef0123", "42", "m1", "o-1_x"]) expect(orderIdSchema.parse(ok)).toBe(ok);
    for (const bad of HOSTILE) expect(orderIdSchema.safeParse(bad).success).toBe(false);
  });

  it("no context keys anything by a hostile order id: each refuses it with InvalidInputError", () => {
    for (const bad of HOSTILE) {
      expect(() => paymentRoute.route(placed(bad))).toThrow(InvalidInputError);
      expect(() => orderingRoute.route(processed(bad))).toThrow(InvalidInputError);
      expect(() => fulfillment.route.route(placed(bad))).toThrow(InvalidInputError);
      expect(() => orderFacts.key(placed(bad))).toThrow(InvalidInputError);
      expect(() => orderTimeline.key(placed(bad))).toThrow(InvalidInputError);
    }
  });

  it("a view consumer dead-letters an OrderPlaced for `__proto__` at once and writes no document", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock();
    const consumer = new Consumer({
      name: "views",
      journal,
      handler: orderFacts,
      clock,
      ids: sequentialIds("dl"),
      metrics: messagingMetrics(),
    });
    const delivery = { subject: "shop.ordering.OrderPlaced", messageId: undefined, attempt: 1, maxDeliveries: 5 };
    for (const bad of ["__proto__", "constructor"]) {
      expect(await consumer.deliver({ ...delivery, body: encodeEnvelope(placed(bad)) })).toEqual({ kind: "ack" });
    }
    const letters = await new DeadLetters(journal, { consumers: [consumer], clock }).list();
    expect(letters.map((l) => l.error)).toEqual([
      expect.stringMatching(/aggregateId: must not be a name JavaScript objects carry/),
      expect.stringMatching(/aggregateId: must not be a name JavaScript objects carry/),
    ]);
    expect(await journal.listDocuments("order-views")).toEqual([]);
  });
});
