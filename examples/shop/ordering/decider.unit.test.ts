import type { EffectOutcome } from "oncely";
import { CommandRejectedError, InvalidInputError } from "oncely";
import { given } from "oncely/testing";
import { describe, expect, it } from "vitest";
import { orderActor } from "./actor.js";
import { parseOrderCommand } from "./commands.js";
import { MAX_MAIL_ATTEMPTS } from "./effects.js";
import type { OrderEvent } from "./events.js";
import { bookAndPen, id } from "./fixtures.js";
import type { IntegrationCommand } from "./integration.js";
import { attentionReasons, deriveStatus } from "./status.js";

const placeOrder = bookAndPen;
const placedEvent: OrderEvent = {
  type: "OrderPlaced",
  orderId: id,
  customerEmail: "ada@example.com",
  currency: "EUR",
  lines: placeOrder.lines,
  amount: 2800,
};
const processed: IntegrationCommand = {
  type: "RecordPaymentProcessed",
  eventId: "payment:42:processed",
  paymentId: "pay_1",
};
const processedEvent: OrderEvent = { type: "PaymentProcessed", eventId: "payment:42:processed", paymentId: "pay_1" };
const confirmationRequested: OrderEvent = {
  type: "ConfirmationEmailRequested",
  key: "order:42:confirmation-email",
  to: "ada@example.com",
};
const shippedCommand: IntegrationCommand = {
  type: "RecordOrderShipped",
  eventId: "shipment:42:shipped",
  shipmentId: "ship_1",
  warehouseEventId: "wh-1",
  shippedAt: "2026-01-02T10:00:00.000Z",
};
const shippedEvent: OrderEvent = {
  type: "OrderShipped",
  eventId: "wh-1",
  shipmentId: "ship_1",
  occurredAt: "2026-01-02T10:00:00.000Z",
};
const shippingMailRequested: OrderEvent = {
  type: "ShippingEmailRequested",
  key: "order:42:shipping-email",
  to: "ada@example.com",
};
const mail = (key: string, template: string) => ({
  kind: "email",
  key,
  input: { to: "ada@example.com", template, orderId: id },
});
const succeeded = (key: string, result: unknown): EffectOutcome => ({
  type: "oncely.effect.succeeded",
  key,
  kind: "email",
  result,
  attempt: 1,
  via: "run",
});
const statusAfter = (events: OrderEvent[]) => deriveStatus(given(orderActor, events, { id }).state);

describe("order: placing", () => {
  it("records the order and publishes OrderPlaced through the outbox (the runtime stamps its version); no effect of its own", () => {
    const decision = given(orderActor, [], { id }).when(placeOrder).then([placedEvent]);
    expect(decision.effects).toEqual([]);
    expect(decision.publish).toEqual([
      {
        eventId: "order:42:placed",
        type: "OrderPlaced",
        source: "ordering",
        aggregateId: id,
        payload: { orderId: id, currency: "EUR", amount: 2800, lines: placeOrder.lines },
      },
    ]);
    expect(decision.reply).toMatchObject({ orderId: id, status: "placed" });
  });

  it("answers a repeated PlaceOrder from the state, publishing nothing, and refuses other details", () => {
    given(orderActor, [placedEvent], { id }).when(placeOrder).thenNothingHappened();
    given(orderActor, [placedEvent], { id })
      .when({ ...placeOrder, currency: "USD" })
      .thenThrows(CommandRejectedError, /already placed/);
  });

  it("accepts only PlaceOrder from outside, naming bad fields", () => {
    expect(() => parseOrderCommand({ ...placeOrder, lines: [] })).toThrow(InvalidInputError);
    expect(() => parseOrderCommand({ type: "RecordOrderShipped" })).toThrow(/PlaceOrder/);
  });
});

describe("order: integration facts", () => {
  it("on PaymentProcessed records the payment and starts the confirmation mail with its own key", () => {
    const decision = given(orderActor, [placedEvent], { id })
      .when(processed)
      .then([processedEvent, confirmationRequested]);
    expect(decision.effects).toEqual([mail("order:42:confirmation-email", "order-confirmation")]);
    expect(decision.reply).toMatchObject({ status: "paid", paymentId: "pay_1" });
  });

  it("a late PaymentProcessed after OrderShipped fills in the payment and never downgrades the order", () => {
    given(orderActor, [placedEvent], { id }).when(shippedCommand).then([shippedEvent]);
    expect(statusAfter([placedEvent, shippedEvent])).toBe("shipped");
    const decision = given(orderActor, [placedEvent, shippedEvent], { id })
      .when(processed)
      .then([processedEvent, confirmationRequested, shippingMailRequested]);
    expect(decision.effects?.map((e) => e.key)).toEqual(["order:42:confirmation-email", "order:42:shipping-email"]);
    expect(statusAfter([placedEvent, shippedEvent, processedEvent])).toBe("shipped");
  });

  it("changes nothing for a repeated fact, even under another eventId", () => {
    const paid = [placedEvent, processedEvent, confirmationRequested];
    const again = given(orderActor, paid, { id })
      .when({ ...processed, eventId: "other", paymentId: "pay_OTHER" })
      .thenNothingHappened();
    expect(again.reply).toMatchObject({ paymentId: "pay_1", duplicate: true });
    given(orderActor, paid, { id })
      .when({ type: "RecordPaymentFailed", eventId: "late", reason: "late" })
      .thenNothingHappened();
  });

  it("shows attention while the payment waits for an operator, and the settlement moves it on", () => {
    const attention: OrderEvent = {
      type: "PaymentNeedsAttention",
      eventId: "payment:42:needs-attention",
      error: "timeout",
    };
    given(orderActor, [placedEvent], { id })
      .when({ type: "RecordPaymentNeedsAttention", eventId: "payment:42:needs-attention", error: "timeout" })
      .then([attention]);
    expect(statusAfter([placedEvent, attention])).toBe("attention");
    given(orderActor, [placedEvent, attention], { id }).when(processed).then([processedEvent, confirmationRequested]);
    expect(statusAfter([placedEvent, attention, processedEvent])).toBe("paid");
  });

  it("ends payment_failed on PaymentFailed: no mail", () => {
    const decision = given(orderActor, [placedEvent], { id })
      .when({ type: "RecordPaymentFailed", eventId: "payment:42:failed", reason: "card declined" })
      .then([{ type: "PaymentFailed", eventId: "payment:42:failed", reason: "card declined" }]);
    expect(decision.effects).toEqual([]);
    expect(decision.reply).toMatchObject({ status: "payment_failed" });
  });

  it("needs attention when goods shipped for a failed payment", () => {
    const failed: OrderEvent = { type: "PaymentFailed", eventId: "payment:42:failed", reason: "declined" };
    expect(statusAfter([placedEvent, failed, shippedEvent])).toBe("attention");
  });

  it("records the accepted picklist", () => {
    given(orderActor, [placedEvent], { id })
      .when({ type: "RecordPicklistAccepted", eventId: "shipment:42:picklist-accepted", picklistId: "pck_1" })
      .then([{ type: "PicklistAccepted", eventId: "shipment:42:picklist-accepted", picklistId: "pck_1" }]);
  });
});

describe("order: mails", () => {
  const shippedAndPaid = [placedEvent, processedEvent, confirmationRequested, shippedEvent, shippingMailRequested];

  it("is completed once paid, both mails sent and shipped", () => {
    const confirmationSent: OrderEvent = {
      type: "ConfirmationEmailSent",
      key: "order:42:confirmation-email",
      messageId: "m1",
      via: "run",
    };
    const all = [...shippedAndPaid, confirmationSent];
    expect(statusAfter(all)).toBe("shipped");
    given(orderActor, all, { id })
      .when(succeeded("order:42:shipping-email", { messageId: "m2" }))
      .then([{ type: "ShippingEmailSent", key: "order:42:shipping-email", messageId: "m2", via: "run" }]);
    expect(
      statusAfter([...all, { type: "ShippingEmailSent", key: "order:42:shipping-email", messageId: "m2", via: "run" }]),
    ).toBe("completed");
  });

  it("shipped with a shortage it has not heard of yet is shipped, not completed; the shortage then asks its refund", () => {
    // Facts arrive in any order: Shipping's OrderShipped names the adjustment it recorded before the
    // shipment, and the order may get it before that adjustment's LinesUnavailable. Completed there
    // would go back to shipped when the shortage came (the demo's CI run found that).
    const shippedShort: IntegrationCommand = { ...shippedCommand, adjustmentIds: ["adj-1"] } as IntegrationCommand;
    const shippedShortEvent = { ...shippedEvent, adjustmentIds: ["adj-1"] } as OrderEvent;
    given(orderActor, [placedEvent, processedEvent, confirmationRequested], { id })
      .when(shippedShort)
      .then([shippedShortEvent, shippingMailRequested]);
    const mailsSent: OrderEvent[] = [
      { type: "ConfirmationEmailSent", key: "order:42:confirmation-email", messageId: "m1", via: "run" },
      { type: "ShippingEmailSent", key: "order:42:shipping-email", messageId: "m2", via: "run" },
    ];
    const before = [placedEvent, processedEvent, confirmationRequested, shippedShortEvent, shippingMailRequested];
    expect(statusAfter([...before, ...mailsSent])).toBe("shipped");
    // Without the adjustment named, the same order is completed: the rule is what holds it back.
    expect(
      statusAfter([
        placedEvent,
        processedEvent,
        confirmationRequested,
        shippedEvent,
        shippingMailRequested,
        ...mailsSent,
      ]),
    ).toBe("completed");
    // The shortage comes: recorded, its refund (the pen, 300) asked under its own key, the customer mailed.
    const lines: IntegrationCommand = {
      type: "RecordLinesUnavailable",
      eventId: "lines:1",
      adjustmentId: "adj-1",
      lines: [{ sku: "pen", quantity: 1 }],
    };
    const decision = given(orderActor, [...before, ...mailsSent], { id })
      .when(lines)
      .thenPublishes([]);
    expect(decision.events?.[0]).toMatchObject({ type: "LinesUnavailable", adjustmentId: "adj-1" });
    expect(decision.effects).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: "refund",
          key: "order:42:refund:adj-1",
          input: { paymentId: "pay_1", amount: 300 },
        }),
        expect.objectContaining({ kind: "email", key: "order:42:stock-email" }),
      ]),
    );
    expect(statusAfter([...before, ...mailsSent, ...(decision.events ?? [])])).toBe("shipped");
  });

  const failed = (key: string, error: string, via: "run" | "operator" = "run"): EffectOutcome => ({
    type: "oncely.effect.failed",
    key,
    kind: "email",
    error,
    attempt: 1,
    via,
  });
  const confirmationFailed = (key: string, reason: string, via: "run" | "operator" = "run"): OrderEvent => ({
    type: "ConfirmationEmailFailed",
    key,
    reason,
    via,
  });
  const confirmationRetried = (attempt: number): OrderEvent => ({
    type: "ConfirmationEmailRequested",
    key: `order:42:confirmation-email:${attempt}`,
    to: "ada@example.com",
    attempt,
  });
  // The simulator's case (seed 5262): the provider never sent it, and an operator settled it as Failed.
  const noRecord = "the provider has no record of this key";

  it("asks again under a new key when a mail definitely failed, and is not in attention meanwhile", () => {
    const decision = given(orderActor, shippedAndPaid, { id })
      .when(failed("order:42:confirmation-email", noRecord, "operator"))
      .then([confirmationFailed("order:42:confirmation-email", noRecord, "operator"), confirmationRetried(2)]);
    expect(decision.effects).toEqual([mail("order:42:confirmation-email:2", "order-confirmation")]);
    expect(decision.reply).toMatchObject({ status: "shipped" });
    const after = given(orderActor, [...shippedAndPaid, ...(decision.events ?? [])], { id }).state;
    expect(after.confirmationEmail).toMatchObject({
      status: "Pending",
      attempt: 2,
      key: "order:42:confirmation-email:2",
      reason: null,
    });
    expect(attentionReasons(after)).toEqual([]);
  });

  it("completes once the new attempt is sent, and takes the same path for the shipping mail", () => {
    const retrying = [
      ...shippedAndPaid,
      confirmationFailed("order:42:confirmation-email", "bounced"),
      confirmationRetried(2),
    ];
    const sent: OrderEvent = {
      type: "ConfirmationEmailSent",
      key: "order:42:confirmation-email:2",
      messageId: "m2",
      via: "run",
    };
    given(orderActor, retrying, { id })
      .when(succeeded("order:42:confirmation-email:2", { messageId: "m2" }))
      .then([sent]);
    const shippingSent: OrderEvent = {
      type: "ShippingEmailSent",
      key: "order:42:shipping-email",
      messageId: "m3",
      via: "run",
    };
    expect(statusAfter([...retrying, sent, shippingSent])).toBe("completed");
    const decision = given(orderActor, shippedAndPaid, { id })
      .when(failed("order:42:shipping-email", "bounced"))
      .then([
        { type: "ShippingEmailFailed", key: "order:42:shipping-email", reason: "bounced", via: "run" },
        { type: "ShippingEmailRequested", key: "order:42:shipping-email:2", to: "ada@example.com", attempt: 2 },
      ]);
    expect(decision.effects).toEqual([mail("order:42:shipping-email:2", "order-shipped")]);
  });

  it("stops after MAX_MAIL_ATTEMPTS: the third failure leaves the order in attention, with no fourth request", () => {
    expect(MAX_MAIL_ATTEMPTS).toBe(3);
    const third = [
      ...shippedAndPaid,
      confirmationFailed("order:42:confirmation-email", "bounced"),
      confirmationRetried(2),
      confirmationFailed("order:42:confirmation-email:2", "bounced"),
      confirmationRetried(3),
    ];
    const lastFailure = confirmationFailed("order:42:confirmation-email:3", "bounced again");
    const decision = given(orderActor, third, { id })
      .when(failed("order:42:confirmation-email:3", "bounced again"))
      .then([lastFailure]);
    expect(decision.effects).toEqual([]);
    expect(decision.reply).toMatchObject({ status: "attention" });
    const spent = [...third, lastFailure];
    expect(attentionReasons(given(orderActor, spent, { id }).state)).toEqual([
      "confirmation email failed (attempt 3): bounced again",
    ]);
    // Nothing starts a fourth: not the same outcome again, not another fact arriving.
    given(orderActor, spent, { id }).when(failed("order:42:confirmation-email:3", "again")).thenNothingHappened();
    given(orderActor, spent, { id }).when(processed).thenNothingHappened();
    given(orderActor, spent, { id })
      .when(failed("order:42:confirmation-email:4", "never asked"))
      .thenThrows(CommandRejectedError, /never requested/);
  });

  it("takes late and repeated outcomes of an earlier attempt's key without change or refusal", () => {
    const retrying = [
      ...shippedAndPaid,
      confirmationFailed("order:42:confirmation-email", noRecord, "operator"),
      confirmationRetried(2),
    ];
    const first = "order:42:confirmation-email";
    given(orderActor, retrying, { id })
      .when(failed(first, noRecord, "operator"))
      .thenNothingHappened();
    given(orderActor, retrying, { id })
      .when(succeeded(first, { messageId: "late" }))
      .thenNothingHappened();
    given(orderActor, retrying, { id })
      .when({ type: "oncely.effect.unknown", key: first, kind: "email", error: "reset", attempt: 3 })
      .thenNothingHappened();
    given(orderActor, retrying, { id })
      .when({ type: "oncely.effect.needs-reconciliation", key: first, kind: "email", error: "budget", attempt: 4 })
      .thenNothingHappened();
    // An outcome event of the earlier key, replayed after the new request, leaves attempt 2 untouched.
    const stray: OrderEvent = { type: "ConfirmationEmailSent", key: first, messageId: "late", via: "run" };
    expect(given(orderActor, [...retrying, stray], { id }).state).toEqual(given(orderActor, retrying, { id }).state);
    // A key that is not one of this order's mails is still refused.
    given(orderActor, retrying, { id })
      .when(succeeded("order:43:confirmation-email:2", { messageId: "m" }))
      .thenThrows(CommandRejectedError, /does not belong/);
    given(orderActor, retrying, { id })
      .when(succeeded("order:42:confirmation-email:02", { messageId: "m" }))
      .thenThrows(CommandRejectedError, /does not belong/);
  });

  it("reads a request without an attempt number as attempt 1", () => {
    const state = given(orderActor, [placedEvent, processedEvent, confirmationRequested], { id }).state;
    expect(state.confirmationEmail).toMatchObject({
      attempt: 1,
      key: "order:42:confirmation-email",
      status: "Pending",
    });
  });

  it("refuses outcomes of keys it never asked for and of other contexts' effects", () => {
    given(orderActor, [placedEvent], { id })
      .when(succeeded("order:42:confirmation-email", { messageId: "m" }))
      .thenThrows(CommandRejectedError, /never requested/);
    given(orderActor, [placedEvent], { id })
      .when(succeeded("order:42:payment", { paymentId: "p" }))
      .thenThrows(CommandRejectedError, /does not belong/);
  });
});
