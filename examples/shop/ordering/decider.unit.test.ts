import { describe, expect, it } from "vitest";
import type { EffectOutcome } from "../../../src/core/decider.js";
import { CommandRejectedError, InvalidInputError } from "../../../src/core/errors.js";
import { given } from "../../../src/testing/decider-spec.js";
import { orderActor } from "./actor.js";
import type { PlaceOrder } from "./commands.js";
import type { OrderEvent } from "./events.js";
import { deriveStatus } from "./status.js";

const id = "42";
const placeOrder: PlaceOrder = {
  type: "PlaceOrder",
  customerEmail: "ada@example.com",
  currency: "EUR",
  lines: [
    { sku: "book", quantity: 2, unitPrice: 1250 },
    { sku: "pen", quantity: 1, unitPrice: 300 },
  ],
};
const placed: OrderEvent[] = [
  {
    type: "OrderPlaced",
    orderId: id,
    customerEmail: "ada@example.com",
    currency: "EUR",
    lines: placeOrder.lines,
    amount: 2800,
  },
  { type: "PaymentRequested", key: "order:42:payment", amount: 2800, currency: "EUR" },
];
const paid: OrderEvent[] = [
  ...placed,
  { type: "PaymentCompleted", key: "order:42:payment", paymentId: "pay_1", via: "run" },
  { type: "ConfirmationEmailRequested", key: "order:42:confirmation-email", to: "ada@example.com" },
  { type: "PicklistRequested", key: "order:42:picklist" },
];
const shipped: OrderEvent = {
  type: "OrderShipped",
  eventId: "evt-1",
  shipmentId: "ship_1",
  occurredAt: "2026-01-02T10:00:00.000Z",
};

const succeeded = (key: string, result: unknown, via: "run" | "lookup" | "operator" = "run"): EffectOutcome => ({
  type: "oncely.effect.succeeded",
  key,
  kind: "k",
  result,
  attempt: 1,
  via,
});
const failed = (key: string, error: string): EffectOutcome => ({
  type: "oncely.effect.failed",
  key,
  kind: "k",
  error,
  attempt: 1,
  via: "run",
});
const unknown = (key: string, attempt = 1): EffectOutcome => ({
  type: "oncely.effect.unknown",
  key,
  kind: "k",
  error: "socket hang up",
  attempt,
});
const reconcile = (key: string): EffectOutcome => ({
  type: "oncely.effect.needs-reconciliation",
  key,
  kind: "k",
  error: "still unknown after 5 lookups",
  attempt: 3,
});
const recordShipment = {
  type: "RecordShipment" as const,
  eventId: "evt-1",
  shipmentId: "ship_1",
  occurredAt: "2026-01-02T10:00:00.000Z",
};
const statusAfter = (events: OrderEvent[]) => deriveStatus(given(orderActor, events, { id }).state);

describe("order: placing", () => {
  it("records the order, asks for the payment with a key from the order id, and computes the amount", () => {
    const decision = given(orderActor, [], { id }).when(placeOrder).then(placed);
    expect(decision.effects).toEqual([
      { kind: "payment", key: "order:42:payment", input: { orderId: "42", amount: 2800, currency: "EUR" } },
    ]);
    expect(decision.reply).toMatchObject({ orderId: "42", status: "placed" });
  });

  it("answers a repeated PlaceOrder from the state and starts no second payment while it is pending", () => {
    const decision = given(orderActor, placed, { id }).when(placeOrder).thenNothingHappened();
    expect(decision.reply).toMatchObject({ status: "placed", paymentId: null });
  });

  it("refuses a second PlaceOrder with other details", () => {
    given(orderActor, placed, { id })
      .when({ ...placeOrder, currency: "USD" })
      .thenThrows(CommandRejectedError, /already placed/);
  });
});

describe("order: payment outcomes", () => {
  it("on success records the payment and starts the confirmation mail and the picklist, each with its own key", () => {
    const decision = given(orderActor, placed, { id })
      .when(succeeded("order:42:payment", { paymentId: "pay_1" }))
      .then(paid.slice(2));
    expect(decision.effects).toEqual([
      {
        kind: "email",
        key: "order:42:confirmation-email",
        input: { to: "ada@example.com", template: "order-confirmation", orderId: "42" },
      },
      {
        kind: "picklist",
        key: "order:42:picklist",
        input: {
          orderId: "42",
          lines: [
            { sku: "book", quantity: 2 },
            { sku: "pen", quantity: 1 },
          ],
        },
      },
    ]);
    expect(decision.reply).toMatchObject({ status: "paid", paymentId: "pay_1" });
  });

  it("returns the stored paymentId for a second success and starts nothing", () => {
    const decision = given(orderActor, paid, { id })
      .when(succeeded("order:42:payment", { paymentId: "pay_OTHER" }))
      .thenNothingHappened();
    expect(decision.reply).toMatchObject({ paymentId: "pay_1" });
  });

  it("ends the order as payment_failed on a definite failure: no mail, no picklist", () => {
    const decision = given(orderActor, placed, { id })
      .when(failed("order:42:payment", "card declined"))
      .then([{ type: "PaymentFailed", key: "order:42:payment", reason: "card declined", via: "run" }]);
    expect(decision.effects).toEqual([]);
    expect(decision.reply).toMatchObject({ status: "payment_failed" });
  });

  it("ignores a failure reported after the success (the first final outcome wins)", () => {
    given(orderActor, paid, { id }).when(failed("order:42:payment", "late")).thenNothingHappened();
    expect(statusAfter(paid)).toBe("paid");
  });

  it("marks an ambiguous payment Unknown once, and further Unknown attempts change nothing", () => {
    const unknownEvent: OrderEvent = {
      type: "PaymentUnknown",
      key: "order:42:payment",
      error: "socket hang up",
      attempt: 1,
    };
    given(orderActor, placed, { id }).when(unknown("order:42:payment")).then([unknownEvent]);
    given(orderActor, [...placed, unknownEvent], { id })
      .when(unknown("order:42:payment", 2))
      .thenNothingHappened();
    expect(statusAfter([...placed, unknownEvent])).toBe("placed");
  });

  it("needs attention while in reconciliation, and resolves to paid when a lookup finds the charge", () => {
    const waiting: OrderEvent[] = [
      ...placed,
      { type: "PaymentNeedsReconciliation", key: "order:42:payment", error: "still unknown after 5 lookups" },
    ];
    given(orderActor, placed, { id }).when(reconcile("order:42:payment")).then(waiting.slice(2));
    expect(statusAfter(waiting)).toBe("attention");
    given(orderActor, waiting, { id }).when(reconcile("order:42:payment")).thenNothingHappened();

    const decision = given(orderActor, waiting, { id })
      .when(succeeded("order:42:payment", { paymentId: "pay_9" }, "lookup"))
      .then([
        { type: "PaymentCompleted", key: "order:42:payment", paymentId: "pay_9", via: "lookup" },
        { type: "ConfirmationEmailRequested", key: "order:42:confirmation-email", to: "ada@example.com" },
        { type: "PicklistRequested", key: "order:42:picklist" },
      ]);
    expect(decision.reply).toMatchObject({ status: "paid" });
  });

  it("refuses a success without the provider's id, and outcomes of keys it never asked for", () => {
    given(orderActor, placed, { id })
      .when(succeeded("order:42:payment", { id: "x" }))
      .thenThrows(CommandRejectedError, /paymentId/);
    given(orderActor, placed, { id })
      .when(succeeded("order:7:payment", { paymentId: "p" }))
      .thenThrows(CommandRejectedError, /does not belong/);
    given(orderActor, placed, { id })
      .when(succeeded("order:42:picklist", { picklistId: "p" }))
      .thenThrows(CommandRejectedError, /never requested/);
  });
});

describe("order: fulfilment", () => {
  it("records the accepted picklist", () => {
    given(orderActor, paid, { id })
      .when(succeeded("order:42:picklist", { picklistId: "pick_1" }))
      .then([{ type: "PicklistAccepted", key: "order:42:picklist", picklistId: "pick_1", via: "run" }]);
  });

  it("on the shipment webhook records OrderShipped and starts the shipping mail; a second webhook changes nothing", () => {
    const decision = given(orderActor, paid, { id })
      .when(recordShipment)
      .then([shipped, { type: "ShippingEmailRequested", key: "order:42:shipping-email", to: "ada@example.com" }]);
    expect(decision.effects).toEqual([
      {
        kind: "email",
        key: "order:42:shipping-email",
        input: { to: "ada@example.com", template: "order-shipped", orderId: "42" },
      },
    ]);
    const duplicate = given(orderActor, [...paid, shipped], { id })
      .when({ ...recordShipment, eventId: "evt-2", shipmentId: "ship_2" })
      .thenNothingHappened();
    expect(duplicate.reply).toMatchObject({ shipmentId: "ship_1", duplicate: true });
  });

  it("records a shipment that arrives before the payment outcome, and the late payment starts no picklist", () => {
    given(orderActor, placed, { id }).when(recordShipment).then([shipped]);
    expect(statusAfter([...placed, shipped])).toBe("shipped");
    given(orderActor, [...placed, shipped], { id })
      .when(succeeded("order:42:payment", { paymentId: "pay_1" }))
      .then([
        { type: "PaymentCompleted", key: "order:42:payment", paymentId: "pay_1", via: "run" },
        { type: "ConfirmationEmailRequested", key: "order:42:confirmation-email", to: "ada@example.com" },
        { type: "ShippingEmailRequested", key: "order:42:shipping-email", to: "ada@example.com" },
      ]);
  });

  it("needs attention when goods shipped for a failed payment", () => {
    const events: OrderEvent[] = [
      ...placed,
      { type: "PaymentFailed", key: "order:42:payment", reason: "declined", via: "run" },
    ];
    given(orderActor, events, { id }).when(recordShipment).then([shipped]);
    expect(statusAfter([...events, shipped])).toBe("attention");
  });

  it("is completed once paid, both mails sent and shipped", () => {
    const all: OrderEvent[] = [
      ...paid,
      { type: "ConfirmationEmailSent", key: "order:42:confirmation-email", messageId: "m1", via: "run" },
      { type: "PicklistAccepted", key: "order:42:picklist", picklistId: "pick_1", via: "run" },
      shipped,
      { type: "ShippingEmailRequested", key: "order:42:shipping-email", to: "ada@example.com" },
    ];
    expect(statusAfter(all)).toBe("shipped");
    given(orderActor, all, { id })
      .when(succeeded("order:42:shipping-email", { messageId: "m2" }))
      .then([{ type: "ShippingEmailSent", key: "order:42:shipping-email", messageId: "m2", via: "run" }]);
    expect(
      statusAfter([...all, { type: "ShippingEmailSent", key: "order:42:shipping-email", messageId: "m2", via: "run" }]),
    ).toBe("completed");
  });

  it("needs attention when the mail provider definitely refused the confirmation", () => {
    const events: OrderEvent[] = [
      ...paid,
      { type: "ConfirmationEmailFailed", key: "order:42:confirmation-email", reason: "bad address", via: "run" },
    ];
    given(orderActor, paid, { id }).when(failed("order:42:confirmation-email", "bad address")).then(events.slice(-1));
    expect(statusAfter(events)).toBe("attention");
  });
});

describe("order: parseCommand names the bad field", () => {
  const parse = (input: unknown) => () => orderActor.parseCommand?.(input);
  const bad = (patch: Record<string, unknown>) => ({ ...placeOrder, ...patch });

  it.each([
    [
      "a negative price",
      bad({ lines: [{ sku: "a", quantity: 1, unitPrice: -5 }] }),
      /lines\.0\.unitPrice: must not be negative/,
    ],
    [
      "a price that is not an integer",
      bad({ lines: [{ sku: "a", quantity: 1, unitPrice: 9.99 }] }),
      /lines\.0\.unitPrice: must be an integer/,
    ],
    ["no lines", bad({ lines: [] }), /lines: must hold at least one line/],
    ["a zero total", bad({ lines: [{ sku: "a", quantity: 1, unitPrice: 0 }] }), /amount: order total must be positive/],
    ["a bad email", bad({ customerEmail: "ada-at-example" }), /customerEmail: must be an email address/],
    ["a currency of 4 letters", bad({ currency: "EURO" }), /currency: must be a 3-letter/],
    ["a zero quantity", bad({ lines: [{ sku: "a", quantity: 0, unitPrice: 5 }] }), /lines\.0\.quantity/],
    ["an unknown command", { type: "CancelOrder" }, /type: must be PlaceOrder or RecordShipment/],
    ["a shipment without a date", { ...recordShipment, occurredAt: "yesterday" }, /occurredAt/],
  ])("rejects %s", (_name, input, message) => {
    expect(parse(input)).toThrow(InvalidInputError);
    expect(parse(input)).toThrow(message);
  });

  it("accepts a valid order and normalises the currency", () => {
    expect(orderActor.parseCommand?.({ ...placeOrder, currency: "eur" })).toEqual(placeOrder);
  });
});

describe("order: actor definition", () => {
  it("snapshots every 50 events", () => {
    expect(orderActor.type).toBe("order");
    expect(orderActor.snapshot).toMatchObject({ every: 50 });
  });
});
