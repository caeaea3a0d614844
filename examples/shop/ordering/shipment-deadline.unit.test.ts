import type { TimerFired } from "oncely";
import { given } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { orderActor } from "./actor.js";
import type { OrderEvent } from "./events.js";
import {
  type OrderEventWithDeadline,
  SHIPMENT_DEADLINE,
  type ShipmentDeadlineMissed,
  shipmentDeadlineKey,
  withShipmentDeadline,
} from "./shipment-deadline.js";
import { attentionReasons, deriveStatus } from "./status.js";

const id = "7";
const NOW = Date.UTC(2026, 0, 1);
const WITHIN = 60_000;
const order = withShipmentDeadline(orderActor, WITHIN);

const placed: OrderEvent = {
  type: "OrderPlaced",
  orderId: id,
  customerEmail: "ada@example.com",
  currency: "EUR",
  lines: [{ sku: "book", quantity: 1, unitPrice: 1000 }],
  amount: 1000,
};
const paid: OrderEvent = { type: "PaymentProcessed", eventId: "payment:7:processed", paymentId: "pay_7" };
const accepted: OrderEvent = { type: "PicklistAccepted", eventId: "shipment:7:picklist-accepted", picklistId: "pl_7" };
const shipped: OrderEvent = {
  type: "OrderShipped",
  eventId: "wh-7",
  shipmentId: "ship_7",
  occurredAt: "2026-01-01T01:00:00.000Z",
};
const fired: TimerFired = {
  type: "oncely.timer.fired",
  key: shipmentDeadlineKey(id),
  name: SHIPMENT_DEADLINE,
  payload: { orderId: id },
  dueAt: NOW + WITHIN,
};
const missed: ShipmentDeadlineMissed = {
  type: "ShipmentDeadlineMissed",
  dueAt: NOW + WITHIN,
  reason: `no shipment within ${WITHIN} ms of the picklist's acceptance (due ${new Date(NOW + WITHIN).toISOString()})`,
};
const confirmation: OrderEvent = {
  type: "ConfirmationEmailRequested",
  key: "order:7:confirmation-email",
  to: "ada@example.com",
};
const before: OrderEventWithDeadline[] = [placed, paid, confirmation];

describe("the order's shipment deadline", () => {
  it("asks for a deadline N after the picklist is accepted, in the same decision", () => {
    const decision = given(order, before, { id, now: NOW })
      .when({ type: "RecordPicklistAccepted", eventId: "shipment:7:picklist-accepted", picklistId: "pl_7" })
      .then([accepted]);
    expect(decision.effects).toEqual([
      {
        kind: "oncely.timer",
        key: "order:7:shipment-deadline",
        input: { name: "shipment", payload: { orderId: id } },
        notBefore: NOW + WITHIN,
      },
    ]);
  });

  it("asks for nothing when the acceptance is a repeat", () => {
    given(order, [...before, accepted], { id })
      .when({ type: "RecordPicklistAccepted", eventId: "shipment:7:picklist-accepted", picklistId: "pl_7" })
      .thenNothingHappened();
  });

  it("fired before OrderShipped: records the miss, and the order needs attention with the reason", () => {
    given(order, [...before, accepted], { id })
      .when(fired)
      .then([missed]);
    const { state } = given(order, [...before, accepted, missed], { id });
    expect(deriveStatus(state)).toBe("attention");
    expect(attentionReasons(state)).toEqual([missed.reason]);
  });

  it("a late OrderShipped still lands and clears it: the order goes on to shipped", () => {
    given(order, [...before, accepted, missed], { id })
      .when({
        type: "RecordOrderShipped",
        eventId: "shipment:7:shipped",
        shipmentId: "ship_7",
        warehouseEventId: "wh-7",
        shippedAt: "2026-01-01T01:00:00.000Z",
      })
      .then([shipped, { type: "ShippingEmailRequested", key: "order:7:shipping-email", to: "ada@example.com" }]);
    const { state } = given(order, [...before, accepted, missed, shipped], { id });
    expect(attentionReasons(state)).toEqual([]);
    expect(deriveStatus(state)).toBe("shipped");
  });

  it("fired after OrderShipped, or a second time, changes nothing: the state decides", () => {
    given(order, [...before, accepted, shipped], { id })
      .when(fired)
      .thenNothingHappened();
    given(order, [...before, accepted, missed], { id })
      .when(fired)
      .thenNothingHappened();
    given(order, [...before, accepted], { id })
      .when({ ...fired, name: "another" })
      .thenNothingHappened();
  });

  it("a cancelled order expects no shipment: the timer records nothing, and a miss recorded before the cancel is no reason", () => {
    const cancelled: OrderEvent = { type: "OrderCancelled", reason: "changed my mind", paymentStatus: "Completed" };
    given(order, [...before, accepted, cancelled], { id })
      .when(fired)
      .thenNothingHappened();
    const { state } = given(order, [...before, accepted, missed, cancelled], { id });
    expect(attentionReasons(state).filter((r) => r === missed.reason)).toEqual([]);
  });

  it("refuses a deadline that is not a positive duration", () => {
    expect(() => withShipmentDeadline(orderActor, 0)).toThrow(/positive number of ms, got 0/);
  });
});
