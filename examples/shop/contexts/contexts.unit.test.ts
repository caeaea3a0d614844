import type { EffectOutcome, Envelope, OutcomeOf, Typed } from "oncely";
import { CommandRejectedError } from "oncely";
import { given } from "oncely/testing";
import { describe, expect, it } from "vitest";
import type { paymentEffect } from "../effects/declarations.js";
import { fulfillment, startShippingId } from "../fulfillment/process.js";
import { devShopKeys, shopSigner } from "../integration/keys.js";
import { paymentActor, paymentRoute } from "../payment/actor.js";
import { MAX_PICKLIST_ATTEMPTS, picklistKey, shipmentActor, UnknownShipmentError } from "../shipping/actor.js";
import { orderFacts, orderTimeline, readOrderView } from "../views/order-views.js";
import { decide, envelope, id, placed, processed } from "./fixtures.js";
import { produce, shopWorld } from "./harness.js";

/** The input each effect was requested with, as the dispatcher copies it from the outbox row into the outcome. */
const inputs = {
  payment: { orderId: id, amount: 2500, currency: "EUR" },
  picklist: { orderId: id, lines: [{ sku: "book", quantity: 2 }] },
};
type PaymentOutcome = OutcomeOf<typeof paymentEffect>;
const outcome = (
  type: "succeeded" | "failed" | "needs-reconciliation",
  key: string,
  extra: object = {},
): EffectOutcome => {
  const kind = key.includes(":payment") ? "payment" : "picklist";
  return {
    type: `oncely.effect.${type}`,
    key,
    kind,
    input: inputs[kind],
    attempt: 1,
    via: "run",
    error: "e",
    result: null,
    ...extra,
  } as EffectOutcome;
};

const picklist = envelope("PicklistAccepted", "shipping", 1, { orderId: id, picklistId: "pck_1" });
const shipped = envelope("OrderShipped", "shipping", 2, {
  orderId: id,
  shipmentId: "shp_1",
  warehouseEventId: "wh-1",
  shippedAt: "2026-01-02T00:00:00Z",
});

describe("payment context", () => {
  const request = { type: "RequestPayment" as const, orderId: id, amount: 2500, currency: "EUR" };

  it("asks for the charge once, with the order's key, and publishes PaymentProcessed", () => {
    const first = decide(paymentActor, [], request);
    expect(first.effects).toEqual([
      { kind: "payment", key: "order:42:payment", input: { orderId: id, amount: 2500, currency: "EUR" } },
    ]);
    const requested = first.events ?? [];
    given(paymentActor, requested, { id }).when(request).thenNothingHappened();
    given(paymentActor, requested, { id })
      .when({ ...request, amount: 1 })
      .thenThrows(CommandRejectedError, /another amount/);
    const done = decide(
      paymentActor,
      requested,
      outcome("succeeded", "order:42:payment", { result: { paymentId: "pay_1" } }),
    );
    expect(done.publish).toEqual([
      {
        eventId: "payment:42:processed",
        type: "PaymentProcessed",
        source: "payment",
        aggregateId: id,
        payload: { orderId: id, paymentId: "pay_1", amount: 2500, currency: "EUR" },
      },
    ]);
    // The first final outcome wins: a late failure publishes nothing.
    given(paymentActor, [...requested, ...(done.events ?? [])], { id })
      .when(outcome("failed", "order:42:payment") as PaymentOutcome)
      .thenNothingHappened();
  });

  it("publishes PaymentNeedsAttention once, then the operator's settlement", () => {
    const requested = decide(paymentActor, [], request).events ?? [];
    const attention = decide(paymentActor, requested, outcome("needs-reconciliation", "order:42:payment"));
    expect(attention.publish?.map((p) => p.type)).toEqual(["PaymentNeedsAttention"]);
    const after = [...requested, ...(attention.events ?? [])];
    given(paymentActor, after, { id })
      .when(outcome("needs-reconciliation", "order:42:payment") as PaymentOutcome)
      .thenNothingHappened();
    const settled = decide(
      paymentActor,
      after,
      outcome("failed", "order:42:payment", { error: "declined", via: "operator" }),
    );
    expect(settled.publish?.map((p) => [p.type, p.payload])).toEqual([
      ["PaymentFailed", { orderId: id, reason: "declined" }],
    ]);
  });

  it("routes OrderPlaced to payment/{orderId}, a payment it starts, and ignores other events", () => {
    expect(paymentRoute.route(placed)).toEqual({
      address: "payment/42",
      command: { type: "RequestPayment", orderId: id, amount: 2500, currency: "EUR" },
      expectNew: true,
    });
    expect(paymentRoute.route(processed)).toBeUndefined();
  });
});

describe("shipping context", () => {
  const start = { type: "StartShipping" as const, orderId: id, lines: [{ sku: "book", quantity: 2 }] };
  const shipment = {
    type: "RecordShipment" as const,
    eventId: "wh-1",
    shipmentId: "shp_1",
    occurredAt: "2026-01-02T00:00:00Z",
  };

  it("refuses a shipment for an order whose shipping never started (no stream is created)", () => {
    given(shipmentActor, [], { id })
      .when(shipment)
      .thenThrows(UnknownShipmentError, /never started/);
  });

  it("sends the picklist once and publishes OrderShipped and PicklistAccepted in the order it recorded them", () => {
    const started = decide(shipmentActor, [], start);
    expect(started.effects?.map((e) => e.key)).toEqual(["order:42:picklist"]);
    const s1 = started.events ?? [];
    given(shipmentActor, s1, { id }).when(start).thenNothingHappened();
    const ship = decide(shipmentActor, s1, shipment);
    expect(ship.publish?.map((p) => p.type)).toEqual(["OrderShipped"]);
    const s2 = [...s1, ...(ship.events ?? [])];
    const again = given(shipmentActor, s2 as never[], { id })
      .when({ ...shipment, eventId: "wh-2" })
      .thenNothingHappened();
    expect(again.reply).toMatchObject({ duplicate: true, shipmentId: "shp_1" });
    const accepted = decide(
      shipmentActor,
      s2,
      outcome("succeeded", "order:42:picklist", { result: { picklistId: "pck_1" } }),
    );
    expect(accepted.publish?.map((p) => p.type)).toEqual(["PicklistAccepted"]);
  });
});

describe("shipping context: a picklist the warehouse never took", () => {
  it("is asked for again under a new key after a definite failure, at most MAX_PICKLIST_ATTEMPTS times", () => {
    const start = { type: "StartShipping" as const, orderId: id, lines: [{ sku: "book", quantity: 2 }] };
    let events = decide(shipmentActor, [], start).events ?? [];
    const keys = ["order:42:picklist"];
    for (let attempt = 2; attempt <= MAX_PICKLIST_ATTEMPTS + 1; attempt++) {
      const previous = keys[keys.length - 1] as string;
      const decision = decide(shipmentActor, events, outcome("failed", previous, { error: "no record" }));
      events = [...events, ...(decision.events ?? [])];
      if (attempt <= MAX_PICKLIST_ATTEMPTS) {
        expect(decision.effects?.map((e) => [e.key, e.input])).toEqual([
          [picklistKey(id, attempt), { orderId: id, lines: start.lines }],
        ]);
        keys.push(picklistKey(id, attempt));
      } else {
        expect(decision.effects ?? []).toEqual([]);
      }
    }
    expect(keys).toEqual(["order:42:picklist", "order:42:picklist:2", "order:42:picklist:3"]);
    // A straggler of an earlier key changes nothing; an unknown key is refused.
    const straggler = decide(
      shipmentActor,
      events,
      outcome("succeeded", "order:42:picklist", { result: { picklistId: "p" } }),
    );
    expect(straggler.events ?? []).toEqual([]);
    expect(() => decide(shipmentActor, events, outcome("failed", "order:42:picklist:9"))).toThrow(CommandRejectedError);
  });
});

describe("fulfillment process", () => {
  const react = (events: Typed[], e: Envelope) =>
    decide(fulfillment.actor, events, { type: "oncely.process.event", envelope: e } as Typed);

  it("starts shipping once both OrderPlaced and PaymentProcessed are known, in either order", () => {
    for (const [first, second] of [
      [placed, processed],
      [processed, placed],
    ] as const) {
      const one = react([], first);
      expect(one.send ?? []).toEqual([]);
      const two = react(one.events ?? [], second);
      expect(two.send).toEqual([
        {
          to: "shipment/42",
          id: startShippingId(id),
          command: { type: "StartShipping", orderId: id, lines: [{ sku: "book", quantity: 2 }] },
          expectNew: true,
        },
      ]);
      const three = react([...(one.events ?? []), ...(two.events ?? [])], processed);
      expect([three.events ?? [], three.send ?? []]).toEqual([[], []]);
    }
  });

  it("never starts shipping for a failed payment", () => {
    const failed = envelope("PaymentFailed", "payment", 1, { orderId: id, reason: "declined" });
    const one = react([], failed);
    expect(react(one.events ?? [], placed).send ?? []).toEqual([]);
  });
});

describe("order views", () => {
  it("a late PaymentProcessed never downgrades a shipped order; the timeline is in version order per source", async () => {
    const world = shopWorld();
    const { views, timeline } = world.contexts.consumers;
    for (const e of [shipped, picklist, placed, processed, shipped]) {
      await views.handle(e);
      await timeline.handle(e);
    }
    const view = await readOrderView(world.journal, id);
    expect(view).toMatchObject({ status: "shipped", payment: "Processed", shipping: "Shipped", shipmentId: "shp_1" });
    expect(view?.timeline.map((t) => `${t.source}:${t.type}:${t.aggregateVersion}`)).toEqual([
      "ordering:OrderPlaced:1",
      "payment:PaymentProcessed:1",
      "shipping:PicklistAccepted:1",
      "shipping:OrderShipped:2",
    ]);
    // PicklistAccepted after OrderShipped would move shipping backwards: ignored and counted.
    expect(views.stats.backwards).toBe(1);
    expect(views.stats.duplicates).toBe(1);
    expect(timeline.stats.parked).toBe(1);
    expect(timeline.stats.released).toBe(1);
    expect(await orderFacts.read(world.journal, "nobody")).toBeUndefined();
    expect(await orderTimeline.read(world.journal, "nobody")).toBeUndefined();
  });

  it("shows attention while the payment waits for an operator, and payment_failed after its settlement", async () => {
    const world = shopWorld();
    const { views } = world.contexts.consumers;
    await views.handle(placed);
    await views.handle(envelope("PaymentNeedsAttention", "payment", 1, { orderId: id, error: "timeout" }));
    expect((await readOrderView(world.journal, id))?.status).toBe("attention");
    await views.handle(envelope("PaymentFailed", "payment", 2, { orderId: id, reason: "declined" }));
    expect((await readOrderView(world.journal, id))?.status).toBe("payment_failed");
  });

  it("dead-letters a payload that does not match its type, and keeps going", async () => {
    const world = shopWorld();
    const { views } = world.contexts.consumers;
    const bad = { ...processed, eventId: "bad-1", payload: { orderId: id } };
    const outcome = await views.deliver({
      subject: "shop.payment.PaymentProcessed",
      // Signed by the payment context's key: authentic, but not a valid PaymentProcessed.
      body: JSON.stringify(shopSigner(devShopKeys()).sign(bad)),
      messageId: "bad-1",
      attempt: 1,
      maxDeliveries: 5,
    });
    expect(outcome).toEqual({ kind: "ack" });
    const letters = await world.journal.listDeadLetters({ consumer: "order-views" });
    expect(letters.map((l) => l.messageId)).toEqual(["bad-1"]);
    expect(letters[0]?.error).toMatch(/invalid PaymentProcessed payload/);
    await views.handle(processed);
    expect((await readOrderView(world.journal, id))?.paymentId).toBe("pay_1");
  });
});

describe("published versions", () => {
  it("the runtime numbers each context's events 1, 2, … per order, in the order they were published", async () => {
    const order = {
      type: "PlaceOrder" as const,
      customerEmail: "v@example.com",
      currency: "EUR",
      lines: [{ sku: "book", quantity: 1, unitPrice: 1250 }],
    };
    const { envelopes } = await produce([
      { orderId: "v1", order, payment: "attention-then-paid", shipBeforePicklistOutcome: true },
    ]);
    expect(envelopes.map((e) => `${e.source}:${e.type}:${e.aggregateVersion}`)).toEqual([
      "ordering:OrderPlaced:1",
      "payment:PaymentNeedsAttention:1",
      "payment:PaymentProcessed:2",
      "shipping:OrderShipped:1",
      "shipping:PicklistAccepted:2",
    ]);
  });
});
