import { describe, expect, it } from "vitest";
import { type AuditInput, audit, type Ledgers, viewDisagreements } from "../../examples/shop/demo/audit.js";
import type { OrderView } from "../../examples/shop/service/order-view.js";

// Hand-made ledgers and views: one completed order (A) and one declined (B). The clean case
// passes every check; each test below breaks exactly one invariant and expects exactly that name.
const at = "2026-01-01T00:00:00.000Z";

function view(
  orderId: string,
  status: OrderView["status"],
  ids: { paymentId?: string; shipmentId?: string } = {},
): OrderView {
  const paid = ids.paymentId !== undefined;
  const done = (id: Record<string, string>) => ({ status: "Completed" as const, via: "run" as const, ...id });
  return {
    orderId,
    status,
    attention: [],
    customerEmail: `${orderId}@example.com`,
    currency: "EUR",
    amount: 1000,
    lines: [{ sku: "book", quantity: 1, unitPrice: 1000 }],
    payment: paid ? done({ paymentId: ids.paymentId as string }) : { status: "Failed", via: "run", reason: "declined" },
    confirmationEmail: paid ? done({ messageId: `m-${orderId}-1` }) : { status: "NotRequested" },
    picklist: paid ? done({ picklistId: `pick-${orderId}` }) : { status: "NotRequested" },
    shipping: ids.shipmentId ? { status: "Completed", shipmentId: ids.shipmentId } : { status: "NotRequested" },
    shippingEmail: ids.shipmentId ? done({ messageId: `m-${orderId}-2` }) : { status: "NotRequested" },
    cancellation: null,
    stock: { rejected: null, shortages: [] },
    refunds: [],
    cancellationEmail: { status: "NotRequested" },
    stockEmail: { status: "NotRequested" },
    version: 1,
    history: [],
  };
}

const charge = (orderId: string, paymentId: string) => ({
  paymentId,
  idempotencyKey: `order:${orderId}:payment`,
  orderId,
  amount: 1000,
  currency: "EUR",
  at,
});
const mail = (
  orderId: string,
  kind: "confirmation-email" | "shipping-email" | "cancellation-email",
  messageId: string,
) => ({
  messageId,
  idempotencyKey: `order:${orderId}:${kind}`,
  to: `${orderId}@example.com`,
  template: kind,
  orderId,
  at,
});

const refund = (orderId: string, idempotencyKey: string, amount: number) => ({
  refundId: `ref-${idempotencyKey}`,
  idempotencyKey,
  paymentId: orderId === "C" ? "pay_3" : "pay_1",
  amount,
  orderId,
  currency: "EUR",
  at,
});

/** Order C: paid, then cancelled before the picklist; refunded in full, mailed. */
function cancelledView(orderId: string, paymentId: string): OrderView {
  const base = view(orderId, "cancelled", { paymentId });
  return {
    ...base,
    picklist: { status: "NotRequested" },
    cancellation: { reason: "changed my mind", paymentStatus: "Completed", shippedBeforeCancel: false },
    refunds: [
      { key: `order:${orderId}:refund`, amount: 1000, cause: "cancelled", status: "Completed", refundId: "ref-1" },
    ],
    cancellationEmail: { status: "Completed", messageId: `m-${orderId}-2` },
  };
}

function clean(): AuditInput {
  const ledgers: Ledgers = {
    payment: {
      charges: [charge("A", "pay_1"), charge("C", "pay_3")],
      refunds: [refund("C", "order:C:refund", 1000)],
      declines: [
        {
          declineId: "d1",
          idempotencyKey: "order:B:payment",
          orderId: "B",
          amount: 1013,
          currency: "EUR",
          reason: "declined",
          at,
        },
      ],
    },
    email: {
      emails: [
        mail("A", "confirmation-email", "m-A-1"),
        mail("A", "shipping-email", "m-A-2"),
        mail("C", "confirmation-email", "m-C-1"),
        mail("C", "cancellation-email", "m-C-2"),
      ],
    },
    warehouse: {
      picklists: [{ picklistId: "pick-A", idempotencyKey: "order:A:picklist", orderId: "A", lines: [], at }],
      shipments: [{ shipmentId: "ship_1", picklistId: "pick-A", orderId: "A", eventId: "e1", at }],
      webhooks: [
        { eventId: "e1", shipmentId: "ship_1", attempt: 1, delivery: 1, outcome: "delivered", at },
        { eventId: "e1", shipmentId: "ship_1", attempt: 1, delivery: 2, outcome: "delivered", at },
      ],
      stockouts: [],
      cancellations: [{ orderId: "C", idempotencyKey: "order:C:picklist-cancel", picklistIds: [], at }],
      shortages: [],
    },
  };
  return {
    placed: [
      { key: "k-A", orderId: "A" },
      { key: "k-B", orderId: "B" },
      { key: "k-C", orderId: "C" },
    ],
    views: {
      A: view("A", "completed", { paymentId: "pay_1", shipmentId: "ship_1" }),
      B: view("B", "payment_failed"),
      C: cancelledView("C", "pay_3"),
    },
    ledgers,
    operator: [],
    client: { requests: 2, retried: 0, replays: 0, replayedAnswers: 0, replayMismatches: [] },
    worker: {
      incarnations: 1,
      killedByParent: 0,
      killedAtFaultPoint: 0,
      inboxDuplicatesAtLeast: 0,
      sameKeyRetriesAtLeast: 0,
    },
  };
}

describe("demo audit", () => {
  it("passes every check on consistent ledgers and views, and counts what the ledgers show", () => {
    const report = audit(clean());
    expect(report.violated).toEqual([]);
    expect(report.checks.length).toBeGreaterThanOrEqual(11);
    expect(report.orders.byStatus).toEqual({ completed: 1, payment_failed: 1, cancelled: 1 });
    expect(report.charges.perOrder).toEqual({ "0": 1, "1": 2 });
    expect(report.duplicates.webhookDeliveriesBeyondFirst).toBe(1);
  });

  const cases: [string, (input: AuditInput) => void][] = [
    [
      "no-order-lost",
      (i) => {
        i.views.A = null;
      },
    ],
    ["replay-returns-same-order", (i) => i.client.replayMismatches.push("k-A: A then X")],
    [
      "every-order-terminal",
      (i) => {
        i.views.A = { ...(i.views.A as OrderView), status: "attention", attention: ["payment outcome unknown"] };
      },
    ],
    ["one-charge-per-paid-order", (i) => i.ledgers.payment.charges.push(charge("A", "pay_2"))],
    ["no-charge-for-failed-payment", (i) => i.ledgers.payment.charges.push(charge("B", "pay_9"))],
    [
      "charge-matches-recorded-payment",
      (i) => {
        i.ledgers.payment.charges = [charge("A", "pay_other")];
      },
    ],
    ["at-most-one-email-per-key", (i) => i.ledgers.email.emails.push(mail("A", "confirmation-email", "m-dup"))],
    [
      "one-confirmation-per-paid-order",
      (i) => {
        i.ledgers.email.emails = i.ledgers.email.emails.filter((e) => !e.idempotencyKey.endsWith("confirmation-email"));
      },
    ],
    [
      "one-shipping-email-per-completed-order",
      (i) => {
        i.ledgers.email.emails = i.ledgers.email.emails.filter((e) => !e.idempotencyKey.endsWith("shipping-email"));
      },
    ],
    [
      "one-picklist-per-paid-order",
      (i) => {
        i.ledgers.warehouse.picklists = [];
      },
    ],
    [
      "at-most-one-shipment-per-order",
      (i) =>
        i.ledgers.warehouse.shipments.push({
          shipmentId: "ship_2",
          picklistId: "pick-A",
          orderId: "A",
          eventId: "e2",
          at,
        }),
    ],
    [
      "cancelled-charged-refunded-once-in-full",
      (i) => {
        i.ledgers.payment.refunds = [];
      },
    ],
    [
      "no-refund-without-charge",
      (i) => i.ledgers.payment.refunds.push({ ...refund("Z", "order:Z:refund", 10), paymentId: "pay_x" }),
    ],
    ["refunds-within-charges", (i) => i.ledgers.payment.refunds.push(refund("A", "order:A:refund:adj-1", 1001))],
    [
      "cancelled-not-shipped-unless-recorded",
      (i) =>
        i.ledgers.warehouse.shipments.push({
          shipmentId: "ship_3",
          picklistId: "pick-C",
          orderId: "C",
          eventId: "e3",
          at,
        }),
    ],
    [
      "out-of-stock-refunded",
      (i) => {
        i.ledgers.warehouse.shipments = [];
        i.ledgers.warehouse.stockouts.push({
          idempotencyKey: "order:A:picklist",
          orderId: "A",
          lines: [],
          reason: "out of stock",
          at,
        });
        // Mailed as it should be: only the refund is missing.
        i.ledgers.email.emails.push({
          ...mail("A", "confirmation-email", "m-A-stock"),
          idempotencyKey: "order:A:stock-email",
          template: "order-out-of-stock",
        });
      },
    ],
    [
      "one-cancellation-mail-per-cancelled-order",
      (i) => {
        i.ledgers.email.emails = i.ledgers.email.emails.filter((e) => !e.idempotencyKey.endsWith("cancellation-email"));
      },
    ],
    [
      "refund-keys-are-the-orders",
      (i) => {
        i.ledgers.payment.refunds = [{ ...refund("C", "foreign", 1000) }];
      },
    ],
    ["short-shipped-lines-refunded-once", (i) => shortShipped(i, { refunds: [] })],
    ["short-shipped-lines-refunded-once", (i) => shortShipped(i, { refunds: [399] })],
    ["short-shipped-lines-refunded-once", (i) => shortShipped(i, { refunds: [200, 200] })],
    ["one-stock-mail-per-short-or-refused-order", (i) => shortShipped(i, { mails: 0 })],
    ["one-stock-mail-per-short-or-refused-order", (i) => shortShipped(i, { mails: 2 })],
  ];

  const COMPENSATION = [
    "cancelled-charged-refunded-once-in-full",
    "no-refund-without-charge",
    "refunds-within-charges",
    "cancelled-not-shipped-unless-recorded",
    "out-of-stock-refunded",
    "one-cancellation-mail-per-cancelled-order",
    "refund-keys-are-the-orders",
    "short-shipped-lines-refunded-once",
    "one-stock-mail-per-short-or-refused-order",
  ];
  it.each(cases)("reports %s when the ledgers or views break it", (name, breakIt) => {
    const input = clean();
    breakIt(input);
    const report = audit(input);
    expect(report.violated).toContain(name);
    // Each compensation case breaks its own invariant, not a neighbouring one.
    if (COMPENSATION.includes(name)) expect(report.violated.filter((v) => COMPENSATION.includes(v))).toEqual([name]);
    const check = report.checks.find((c) => c.name === name);
    expect(check?.violations.length).toBeGreaterThan(0);
  });

  it("owes a cancelled order refused out of stock at most one stock mail: a refusal after the cancel is not announced", () => {
    const refusedAfterCancel = (i: AuditInput, mails: number) => {
      i.ledgers.warehouse.stockouts.push({
        idempotencyKey: "order:C:picklist",
        orderId: "C",
        lines: [],
        reason: "out of stock",
        at,
      });
      for (let n = 0; n < mails; n++) {
        i.ledgers.email.emails.push({
          ...mail("C", "confirmation-email", `m-C-stock-${n}`),
          idempotencyKey: n === 0 ? "order:C:stock-email" : `order:C:stock-email:${n + 1}`,
          template: "order-out-of-stock",
        });
      }
      return audit(i).violated;
    };
    expect(refusedAfterCancel(clean(), 0)).toEqual([]);
    expect(refusedAfterCancel(clean(), 1)).toEqual([]);
    expect(refusedAfterCancel(clean(), 2)).toEqual(["one-stock-mail-per-short-or-refused-order"]);
  });

  it("passes a short shipment refunded once, exactly the missing lines (at the order's prices), with one stock mail", () => {
    const input = clean();
    shortShipped(input);
    expect(audit(input).violated).toEqual([]);
    // The refund asked for again after a definite failure counts as the same refund.
    const again = clean();
    shortShipped(again);
    const [first] = again.ledgers.payment.refunds.filter((r) => r.orderId === "A");
    if (first) first.idempotencyKey = "order:A:refund:adj-1:attempt-2";
    expect(audit(again).violated).toEqual([]);
  });

  it("expects a LinesUnavailable in the integration timeline per shortage the order recorded", () => {
    const input = clean();
    shortShipped(input);
    const order = input.views.A as OrderView;
    const timeline = (shipping: string[]) => ({
      status: "completed",
      payment: "Processed",
      shipping: "Shipped",
      paymentId: "pay_1",
      shipmentId: "ship_1",
      timeline: [
        { source: "ordering", type: "OrderPlaced", aggregateVersion: 1 },
        { source: "payment", type: "PaymentProcessed", aggregateVersion: 1 },
        ...shipping.map((type, i) => ({ source: "shipping", type, aggregateVersion: i + 1 })),
      ],
    });
    expect(viewDisagreements("A", order, timeline(["LinesUnavailable", "PicklistAccepted", "OrderShipped"]))).toEqual(
      [],
    );
    expect(viewDisagreements("A", order, timeline(["PicklistAccepted", "OrderShipped"]))).toHaveLength(1);
  });

  it("counts a mail asked for again under a new key as one email, and a wrongly settled one as two", () => {
    const resent = clean();
    resent.ledgers.email.emails = resent.ledgers.email.emails.map((e) =>
      e.idempotencyKey === "order:A:confirmation-email" ? { ...e, idempotencyKey: "order:A:confirmation-email:2" } : e,
    );
    expect(audit(resent).violated).toEqual([]);
    const twice = clean();
    twice.ledgers.email.emails.push({
      ...mail("A", "confirmation-email", "m-A-3"),
      idempotencyKey: "order:A:confirmation-email:2",
    });
    expect(audit(twice).violated).toEqual(["one-confirmation-per-paid-order"]);
  });

  it("reports each attempt key of an effect asked for again on its own", () => {
    const input = clean();
    const a = input.views.A as OrderView;
    const entry = (version: number, type: string, data: object) => ({
      stream: "order/A",
      version,
      type,
      recordedAt: at,
      data,
    });
    a.history = [
      entry(1, "ConfirmationEmailNeedsReconciliation", { key: "order:A:confirmation-email" }),
      entry(2, "ConfirmationEmailFailed", { key: "order:A:confirmation-email", via: "operator" }),
      entry(3, "ConfirmationEmailRequested", { key: "order:A:confirmation-email:2", attempt: 2 }),
      entry(4, "ConfirmationEmailUnknown", { key: "order:A:confirmation-email:2" }),
      entry(5, "ConfirmationEmailSent", { key: "order:A:confirmation-email:2", via: "lookup" }),
    ];
    expect(audit(input).unknown.items).toEqual([
      { key: "order:A:confirmation-email", fact: "confirmationEmail", settledVia: "operator", outcome: "Failed" },
      { key: "order:A:confirmation-email:2", fact: "confirmationEmail", settledVia: "lookup", outcome: "Completed" },
    ]);
  });

  it("reports unknown outcomes with how they were settled, from the histories", () => {
    const input = clean();
    const a = input.views.A as OrderView;
    a.history = [
      {
        stream: "payment/A",
        version: 1,
        type: "PaymentUnknown",
        recordedAt: at,
        data: { type: "PaymentUnknown", key: "order:A:payment" },
      },
      // The order's own record of the integration fact is not the payment effect's outcome.
      { stream: "order/A", version: 2, type: "PaymentFailed", recordedAt: at, data: { reason: "x" } },
      {
        stream: "payment/A",
        version: 2,
        type: "PaymentCompleted",
        recordedAt: at,
        data: { type: "PaymentCompleted", key: "order:A:payment", paymentId: "pay_1", via: "lookup" },
      },
      {
        stream: "shipment/A",
        version: 3,
        type: "PicklistNeedsReconciliation",
        recordedAt: at,
        data: { key: "order:A:picklist" },
      },
    ];
    const report = audit(input);
    expect(report.unknown.items).toEqual([
      { key: "order:A:payment", fact: "payment", settledVia: "lookup", outcome: "Completed" },
      { key: "order:A:picklist", fact: "picklist", settledVia: "unresolved", outcome: "Unknown" },
    ]);
    expect(report.unknown.byVia).toEqual({ lookup: 1, unresolved: 1 });
  });
});

/**
 * Order A (book 1 × 600, pen 2 × 200) comes up one pen short under adjustment adj-1: by default
 * refunded 200 under its key, and mailed once; `refunds` and `mails` break it.
 */
function shortShipped(input: AuditInput, broken: { refunds?: number[]; mails?: number } = {}): void {
  const a = input.views.A as OrderView;
  a.lines = [
    { sku: "book", quantity: 1, unitPrice: 600 },
    { sku: "pen", quantity: 2, unitPrice: 200 },
  ];
  const missing = [{ sku: "pen", quantity: 1 }];
  a.stock = { rejected: null, shortages: [{ adjustmentId: "adj-1", lines: missing }] };
  input.ledgers.warehouse.shortages.push({
    adjustmentId: "adj-1",
    picklistId: "pick-A",
    orderId: "A",
    lines: missing,
    eventId: "w-adj-1",
    at,
  });
  for (const [n, amount] of (broken.refunds ?? [200]).entries()) {
    input.ledgers.payment.refunds.push(
      refund("A", `order:A:refund:adj-1${n === 0 ? "" : `:attempt-${n + 1}`}`, amount),
    );
  }
  for (let n = 0; n < (broken.mails ?? 1); n++) {
    input.ledgers.email.emails.push({
      ...mail("A", "confirmation-email", `m-A-stock-${n}`),
      idempotencyKey: `order:A:stock-email${n === 0 ? "" : `:${n + 1}`}`,
      template: "order-out-of-stock",
    });
  }
}
