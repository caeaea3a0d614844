import type { EffectOutcome } from "oncely";
import { CommandRejectedError, InvalidInputError } from "oncely";
import { given } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { orderActor } from "./actor.js";
import { CancellationRefusedError } from "./cancellation.js";
import { parseOrderCommand } from "./commands.js";
import type { OrderEvent } from "./events.js";
import type { IntegrationCommand } from "./integration.js";
import { deriveStatus } from "./status.js";

const id = "42";
const lines = [
  { sku: "book", quantity: 2, unitPrice: 1250 },
  { sku: "pen", quantity: 1, unitPrice: 300 },
];
const placed: OrderEvent = {
  type: "OrderPlaced",
  orderId: id,
  customerEmail: "ada@example.com",
  currency: "EUR",
  lines,
  amount: 2800,
};
const paid: OrderEvent[] = [
  placed,
  { type: "PaymentProcessed", eventId: "payment:42:processed", paymentId: "pay_1" },
  { type: "ConfirmationEmailRequested", key: "order:42:confirmation-email", to: "ada@example.com" },
];
const shipped: OrderEvent = {
  type: "OrderShipped",
  eventId: "wh-1",
  shipmentId: "ship_1",
  occurredAt: "2026-01-02T10:00:00.000Z",
};
const cancelCommand = { type: "CancelOrder" as const, reason: "changed my mind" };
const cancellationMail: OrderEvent = {
  type: "CancellationEmailRequested",
  key: "order:42:cancellation-email",
  to: "ada@example.com",
};
const fullRefund = { type: "RefundRequested" as const, key: "order:42:refund", paymentId: "pay_1", amount: 2800 };
const processed: IntegrationCommand = {
  type: "RecordPaymentProcessed",
  eventId: "payment:42:processed",
  paymentId: "pay_1",
};
const refundDone = (key: string): EffectOutcome => ({
  type: "oncely.effect.succeeded",
  key,
  kind: "refund",
  result: { refundId: `ref-${key}` },
  attempt: 1,
  via: "run",
});

describe("order: cancellation", () => {
  it("before payment: cancelled and mailed, no refund; a charge that completes later is refunded in full", () => {
    const decision = given(orderActor, [placed], { id })
      .when(cancelCommand)
      .then([{ type: "OrderCancelled", reason: "changed my mind", paymentStatus: "Pending" }, cancellationMail]);
    expect(decision.effects?.map((e) => e.key)).toEqual(["order:42:cancellation-email"]);
    expect(decision.publish).toEqual([
      expect.objectContaining({ eventId: "order:42:cancelled", type: "OrderCancelled" }),
    ]);
    const cancelled = [placed, ...(decision.events ?? [])];
    // No confirmation mail for an order the customer already cancelled: only the refund.
    const late = given(orderActor, cancelled, { id })
      .when(processed)
      .then([
        processed.type === "RecordPaymentProcessed"
          ? { type: "PaymentProcessed", eventId: processed.eventId, paymentId: "pay_1" }
          : placed,
        { ...fullRefund, cause: "cancelled" },
      ]);
    expect(late.effects).toEqual([
      { kind: "refund", key: "order:42:refund", input: { paymentId: "pay_1", amount: 2800 } },
    ]);
    expect(late.reply).toMatchObject({ status: "refunding" });
  });

  it("before payment, a failed payment: nothing to refund, the order ends cancelled once the mail went out", () => {
    const history: OrderEvent[] = [
      placed,
      { type: "OrderCancelled", reason: "r", paymentStatus: "Pending" },
      cancellationMail,
    ];
    const failed = given(orderActor, history, { id })
      .when({ type: "RecordPaymentFailed", eventId: "payment:42:failed", reason: "declined" })
      .then([{ type: "PaymentFailed", eventId: "payment:42:failed", reason: "declined" }]);
    expect(failed.effects).toEqual([]);
    const state = given(orderActor, [...history, ...(failed.events ?? [])], { id }).state;
    expect(deriveStatus(state)).toBe("refunding");
    const sent = [
      ...history,
      ...(failed.events ?? []),
      { type: "CancellationEmailSent", key: "order:42:cancellation-email", messageId: "m1", via: "run" } as OrderEvent,
    ];
    expect(deriveStatus(given(orderActor, sent, { id }).state)).toBe("cancelled");
  });

  it("a confirmation mail that definitely failed is not asked again once cancelled, and calls for no attention", () => {
    const failedMail = {
      type: "oncely.effect.failed" as const,
      key: "order:42:confirmation-email",
      kind: "email",
      error: "the provider has no record of this key",
      attempt: 1,
      via: "lookup" as const,
      input: { to: "ada@example.com", template: "order-confirmation", orderId: id },
    };
    const cancelled: OrderEvent[] = [
      ...paid,
      { type: "OrderCancelled", reason: "r", paymentStatus: "Completed" },
      cancellationMail,
      { ...fullRefund, cause: "cancelled" },
    ];
    const decision = given(orderActor, cancelled, { id })
      .when(failedMail as EffectOutcome)
      .then([
        {
          type: "ConfirmationEmailFailed",
          key: "order:42:confirmation-email",
          reason: failedMail.error,
          via: "lookup",
        },
      ]);
    expect(decision.effects).toEqual([]);
    const settled = [
      ...cancelled,
      ...(decision.events ?? []),
      { type: "CancellationEmailSent", key: "order:42:cancellation-email", messageId: "m1", via: "run" } as OrderEvent,
      { type: "RefundCompleted", key: "order:42:refund", refundId: "ref-1", via: "run" } as OrderEvent,
    ];
    expect(deriveStatus(given(orderActor, settled, { id }).state)).toBe("cancelled");
  });

  it("after payment, before shipment: refund under order:{id}:refund and the cancellation mail in one commit", () => {
    const decision = given(orderActor, paid, { id })
      .when(cancelCommand)
      .then([
        { type: "OrderCancelled", reason: "changed my mind", paymentStatus: "Completed" },
        cancellationMail,
        { ...fullRefund, cause: "cancelled" },
      ]);
    expect(decision.effects?.map((e) => e.key)).toEqual(["order:42:cancellation-email", "order:42:refund"]);
  });

  it("after shipment: refused with 409's reason, nothing recorded", () => {
    given(orderActor, [...paid, shipped], { id })
      .when(cancelCommand)
      .thenThrows(CancellationRefusedError, /already shipped \(shipment ship_1\)/);
  });

  it("a second cancel (another key) is answered from the state; an order never placed cannot be cancelled", () => {
    const cancelled = given(orderActor, paid, { id }).when(cancelCommand).decision().events ?? [];
    const again = given(orderActor, [...paid, ...cancelled], { id })
      .when(cancelCommand)
      .thenNothingHappened();
    expect(again.reply).toMatchObject({ duplicate: true });
    given(orderActor, [], { id })
      .when(cancelCommand)
      .thenThrows(CommandRejectedError, /never placed/);
  });

  it("a shipment after the cancel is recorded as shipped-before-cancel; the refund stands and no shipping mail goes", () => {
    const cancelled = given(orderActor, paid, { id }).when(cancelCommand).decision().events ?? [];
    const decision = given(orderActor, [...paid, ...cancelled], { id })
      .when({
        type: "RecordOrderShipped",
        eventId: "shipment:42:shipped",
        shipmentId: "ship_1",
        warehouseEventId: "wh-1",
        shippedAt: "2026-01-02T10:00:00.000Z",
      })
      .then([shipped, { type: "ShippedBeforeCancel", shipmentId: "ship_1" }]);
    expect(decision.effects).toEqual([]);
  });

  it("validates the reason at the boundary", () => {
    expect(() => parseOrderCommand({ type: "CancelOrder", reason: " " })).toThrow(InvalidInputError);
    expect(() => parseOrderCommand({ type: "CancelOrder" })).toThrow(/reason/);
    expect(parseOrderCommand({ type: "CancelOrder", reason: " late " })).toEqual({
      type: "CancelOrder",
      reason: "late",
    });
  });
});

describe("order: out of stock", () => {
  it("a picklist refused for good: refunded in full and the customer mailed", () => {
    const decision = given(orderActor, paid, { id })
      .when({ type: "RecordPicklistRejected", eventId: "shipment:42:picklist-rejected", reason: "out of stock" })
      .then([
        { type: "PicklistRejected", eventId: "shipment:42:picklist-rejected", reason: "out of stock" },
        { ...fullRefund, cause: "out-of-stock" },
        { type: "StockEmailRequested" as const, key: "order:42:stock-email", to: "ada@example.com" },
      ]);
    expect(decision.effects?.map((e) => e.kind)).toEqual(["refund", "email"]);
  });

  it("lines the warehouse cannot ship: a partial refund per adjustment, under its own key, for those lines only", () => {
    const short = (adjustmentId: string, sku: string, quantity: number): IntegrationCommand => ({
      type: "RecordLinesUnavailable",
      eventId: `shipment:42:lines-unavailable:${adjustmentId}`,
      adjustmentId,
      lines: [{ sku, quantity }],
    });
    const first = given(orderActor, paid, { id }).when(short("adj-1", "pen", 1));
    expect(first.decision().effects).toEqual([
      { kind: "refund", key: "order:42:refund:adj-1", input: { paymentId: "pay_1", amount: 300 } },
      expect.objectContaining({ key: "order:42:stock-email" }),
    ]);
    const after = [...paid, ...(first.decision().events ?? [])];
    const second = given(orderActor, after, { id }).when(short("adj-2", "book", 1));
    expect(second.decision().effects).toEqual([
      { kind: "refund", key: "order:42:refund:adj-2", input: { paymentId: "pay_1", amount: 1250 } },
    ]);
    // A cancel then refunds only what is left, under the one full-refund key.
    const cancelled = given(orderActor, [...after, ...(second.decision().events ?? [])], { id }).when(cancelCommand);
    expect(cancelled.decision().effects).toContainEqual({
      kind: "refund",
      key: "order:42:refund",
      input: { paymentId: "pay_1", amount: 1250 },
    });
  });

  it("a partial refund pending when the order is cancelled, then definitely failed, is asked again: the charge comes back whole", () => {
    const short: IntegrationCommand = {
      type: "RecordLinesUnavailable",
      eventId: "shipment:42:lines-unavailable:adj-1",
      adjustmentId: "adj-1",
      lines: [{ sku: "pen", quantity: 1 }],
    };
    const partial = given(orderActor, paid, { id }).when(short).decision().events ?? [];
    const pending = [...paid, ...partial];
    // Cancelled while the 300 is on its way: the full refund takes the other 2500.
    const cancelled = given(orderActor, pending, { id }).when(cancelCommand);
    expect(cancelled.decision().effects).toContainEqual({
      kind: "refund",
      key: "order:42:refund",
      input: { paymentId: "pay_1", amount: 2500 },
    });
    const history = [...pending, ...(cancelled.decision().events ?? [])];
    const failed: EffectOutcome = {
      type: "oncely.effect.failed",
      key: "order:42:refund:adj-1",
      kind: "refund",
      error: "the provider has no record of this key",
      attempt: 1,
      via: "lookup",
    };
    const again = given(orderActor, history, { id }).when(failed).decision();
    expect(again.effects).toEqual([
      { kind: "refund", key: "order:42:refund:adj-1:attempt-2", input: { paymentId: "pay_1", amount: 300 } },
    ]);
  });

  it("a refund outcome is recorded once; one for a key never asked for is refused", () => {
    const cancelled = given(orderActor, paid, { id }).when(cancelCommand).decision().events ?? [];
    const history = [...paid, ...cancelled];
    given(orderActor, history, { id })
      .when(refundDone("order:42:refund"))
      .then([{ type: "RefundCompleted", key: "order:42:refund", refundId: "ref-order:42:refund", via: "run" }]);
    const done = given(orderActor, history, { id }).when(refundDone("order:42:refund")).decision().events ?? [];
    given(orderActor, [...history, ...done], { id })
      .when(refundDone("order:42:refund"))
      .thenNothingHappened();
    given(orderActor, history, { id })
      .when(refundDone("order:42:refund:adj-9"))
      .thenThrows(CommandRejectedError, /never requested/);
  });

  it("a refund that definitely failed is asked again under a new key, at most three times, then needs attention", () => {
    let history = [...paid, ...(given(orderActor, paid, { id }).when(cancelCommand).decision().events ?? [])];
    const keys = ["order:42:refund", "order:42:refund:attempt-2", "order:42:refund:attempt-3"];
    for (const [i, key] of keys.entries()) {
      const failed: EffectOutcome = {
        type: "oncely.effect.failed",
        key,
        kind: "refund",
        error: "no record",
        attempt: 1,
        via: "lookup",
      };
      const decision = given(orderActor, history, { id }).when(failed).decision();
      const next = keys[i + 1];
      expect(decision.effects).toEqual(
        next ? [{ kind: "refund", key: next, input: { paymentId: "pay_1", amount: 2800 } }] : [],
      );
      history = [...history, ...(decision.events ?? [])];
    }
    const state = given(orderActor, history, { id }).state;
    expect(deriveStatus(state)).toBe("attention");
  });
});
