import { parseAddress } from "oncely";
import { EFFECT_FACTS, type EffectFact, effectKey, effectOfKey } from "../ordering/effects.js";
import { EVENT_STAGE, FACT_STREAM, type Stage, type Via } from "../ordering/events.js";
import { ENDED_STATUSES } from "../ordering/status.js";
import type { OrderView } from "../service/order-view.js";
import { compensationChecks } from "./audit-compensation.js";
import type { Ledgers } from "./ledgers.js";

/**
 * The audit: a pure function from what the providers say they did (their own ledgers, read over
 * `GET /ledger`) and what the shop says happened (its order views), to a report and the list of
 * invariants that failed. The providers' ledgers are the ground truth: a charge in the payment
 * ledger is money taken, whatever the shop believes.
 */

export type { Ledgers } from "./ledgers.js";

export interface OperatorSettlement {
  key: string;
  outcome: "succeeded" | "failed";
  /** What the operator read in the provider's ledger. */
  evidence: string;
}

/** What `GET /order-views/:id` answers, as far as the audit reads it. */
export interface IntegrationView {
  status: string;
  payment: string | null;
  shipping: string | null;
  paymentId: string | null;
  shipmentId: string | null;
  timeline: { source: string; type: string; aggregateVersion: number }[];
}

export interface AuditInput {
  /** Orders the client got a 201/200 for. */
  placed: { key: string; orderId: string }[];
  /** The shop's view of each placed order; null when the shop answered 404. */
  views: Record<string, OrderView | null>;
  ledgers: Ledgers;
  /** The order views built from integration events only, and what is left unsettled among them. */
  integration?: { views: Record<string, IntegrationView | null>; deadLetters: number; parkedAtEnd: number };
  operator: OperatorSettlement[];
  client: {
    requests: number;
    retried: number;
    replays: number;
    replayedAnswers: number;
    /** Replays (same key, same body) that did not get the same order back with Idempotent-Replayed. */
    replayMismatches: string[];
  };
  worker: {
    incarnations: number;
    killedByParent: number;
    killedAtFaultPoint: number;
    /** Summed over incarnations from polled counters: a lower bound (a killed worker's last counts are lost). */
    inboxDuplicatesAtLeast: number;
    sameKeyRetriesAtLeast: number;
  };
}

export interface Check {
  name: string;
  description: string;
  ok: boolean;
  violations: string[];
}

export interface UnknownOutcome {
  key: string;
  fact: EffectFact;
  /** How it ended: run (a retry with the same key), lookup, operator; or unresolved. */
  settledVia: Via | "unresolved";
  outcome: "Completed" | "Failed" | "Unknown";
}

export interface AuditReport {
  orders: { placed: number; byStatus: Record<string, number> };
  charges: { total: number; declines: number; perOrder: Record<string, number> };
  /** Refunds in the payment ledger: how many, their sum, and the sum of all charges (minor units, currencies mixed). */
  refunds: { total: number; amount: number; charged: number };
  emails: { total: number; keys: number; maxPerKey: number };
  picklists: {
    total: number;
    orders: number;
    maxPerOrder: number;
    stockouts: number;
    cancelled: number;
    /** Accepted picklists the warehouse reported lines of as unavailable (one adjustment each). */
    shortShipped: number;
  };
  shipments: { total: number; maxPerOrder: number; shippedBeforeCancel: number };
  duplicates: {
    webhookDeliveriesBeyondFirst: number;
    webhookDuplicatesRecordedTwice: number;
    clientReplaysAnswered: number;
    clientRetries: number;
    inboxDuplicatesAtLeast: number;
    sameKeyRetriesAtLeast: number;
  };
  unknown: { total: number; byVia: Record<string, number>; items: UnknownOutcome[] };
  operator: OperatorSettlement[];
  worker: AuditInput["worker"];
  checks: Check[];
  /** Names of the failed checks; empty when the audit is clean. */
  violated: string[];
}

const countBy = <T>(items: readonly T[], key: (item: T) => string): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
};
const max = (counts: Map<string, number>) => Math.max(0, ...counts.values());
const PAID = new Set(["paid", "shipped", "completed"]);
const TERMINAL: ReadonlySet<string> = new Set(ENDED_STATUSES);

/**
 * Where the order view built from integration events disagrees with the order itself: payment,
 * shipment, their ids, and a complete timeline. Views are eventually consistent, so the demo
 * waits (bounded) for this to be empty before it audits.
 */
export function viewDisagreements(orderId: string, order: OrderView, view: IntegrationView | null): string[] {
  if (view === null) return [`order ${orderId}: no order view`];
  const problems: string[] = [];
  const payment = { Completed: "Processed", Failed: "Failed" }[order.payment.status as string] ?? null;
  if ((view.payment === "NeedsAttention" ? null : view.payment) !== payment) {
    problems.push(`order ${orderId}: payment ${order.payment.status}, view ${view.payment}`);
  }
  if ((order.payment.paymentId ?? null) !== view.paymentId) {
    problems.push(`order ${orderId}: paymentId ${order.payment.paymentId}, view ${view.paymentId}`);
  }
  if ((order.shipping.status === "Completed") !== (view.shipping === "Shipped")) {
    problems.push(`order ${orderId}: shipping ${order.shipping.status}, view ${view.shipping}`);
  }
  // One OrderPlaced, one payment outcome (plus an attention notice if it went to reconciliation),
  // PicklistAccepted and OrderShipped for a paid order.
  // A cancelled order adds OrderCancelled; its shipping may have stopped anywhere (0 to 2 events).
  // A picklist refused for good is announced alone (PicklistRejected). Each shortage the warehouse
  // reported adds its LinesUnavailable, in any place among them (webhooks and outcomes race).
  const sources = countBy(view.timeline, (t) => t.source);
  const cancelled = order.cancellation !== null;
  const paid = order.payment.status === "Completed";
  const shortages = order.stock.shortages.length;
  const expectedShipping = (!paid ? [0] : cancelled ? [0, 1, 2] : order.stock.rejected !== null ? [1] : [2]).map(
    (n) => n + shortages,
  );
  if (sources.get("ordering") !== (cancelled ? 2 : 1) || !expectedShipping.includes(sources.get("shipping") ?? 0)) {
    problems.push(
      `order ${orderId}: timeline ${view.timeline.map((t) => `${t.source}:${t.type}@${t.aggregateVersion}`).join(", ")}`,
    );
  }
  return problems;
}

export function audit(input: AuditInput): AuditReport {
  const { ledgers, views } = input;
  const orders = input.placed.map((p) => ({ ...p, view: views[p.orderId] ?? null }));
  const known = new Set(orders.map((o) => o.orderId));
  const chargesByOrder = countBy(ledgers.payment.charges, (c) => c.orderId);
  const emailsByKey = countBy(ledgers.email.emails, (e) => e.idempotencyKey);
  const picklistsByOrder = countBy(ledgers.warehouse.picklists, (p) => p.orderId);
  const shipmentsByOrder = countBy(ledgers.warehouse.shipments, (s) => s.orderId);
  const paidOrder = (view: OrderView | null) =>
    view !== null && (PAID.has(view.status) || view.payment.status === "Completed");

  const checks: Check[] = [];
  const check = (name: string, description: string, violations: string[]) =>
    checks.push({ name, description, ok: violations.length === 0, violations });

  check(
    "no-order-lost",
    "every order the client got a 201/200 for exists in the shop",
    orders.filter((o) => o.view === null).map((o) => `order ${o.orderId} (key ${o.key}) is missing`),
  );
  check(
    "replay-returns-same-order",
    "posting an order again with the same key and body returned the same order, marked as replayed",
    input.client.replayMismatches,
  );
  check(
    "every-order-terminal",
    "every order ended completed, payment_failed, cancelled or out_of_stock (attention is not terminal)",
    orders
      .filter((o) => o.view !== null && !TERMINAL.has(o.view.status))
      .map(
        (o) =>
          `order ${o.orderId} is ${o.view?.status}${o.view?.attention.length ? `: ${o.view.attention.join("; ")}` : ""}`,
      ),
  );
  check(
    "one-charge-per-paid-order",
    "exactly 1 charge in the payment ledger for each paid/shipped/completed order",
    orders
      .filter((o) => paidOrder(o.view))
      .filter((o) => (chargesByOrder.get(o.orderId) ?? 0) !== 1)
      .map((o) => `order ${o.orderId} was charged ${chargesByOrder.get(o.orderId) ?? 0} times`),
  );
  check(
    "no-charge-for-failed-payment",
    "0 charges for each payment_failed order",
    orders
      .filter((o) => o.view?.payment.status === "Failed")
      .filter((o) => (chargesByOrder.get(o.orderId) ?? 0) !== 0)
      .map((o) => `order ${o.orderId} failed its payment but was charged ${chargesByOrder.get(o.orderId)} times`),
  );
  check(
    "charge-matches-recorded-payment",
    "every charge belongs to a placed order and its paymentId is the one the order recorded",
    ledgers.payment.charges.flatMap((charge) => {
      if (!known.has(charge.orderId)) return [`charge ${charge.paymentId} for unknown order ${charge.orderId}`];
      const recorded = views[charge.orderId]?.payment.paymentId;
      return recorded === charge.paymentId
        ? []
        : [`charge ${charge.paymentId} of order ${charge.orderId}: the order recorded ${recorded ?? "no payment"}`];
    }),
  );
  check(
    "at-most-one-email-per-key",
    "the mail provider sent at most 1 email per idempotency key",
    [...emailsByKey].filter(([, n]) => n > 1).map(([key, n]) => `${n} emails under key ${key}`),
  );
  // Counted per order and mail over all attempt keys (`…:confirmation-email`, `…:2`, `…:3`): a mail
  // asked for again after a definite failure the provider never performed is still one email, and
  // a failure settled wrongly (the provider had sent it) shows up as two.
  const emailsByMail = countBy(ledgers.email.emails, (e) => {
    const named = effectOfKey(e.orderId, e.idempotencyKey);
    return named ? `${e.orderId}/${named.fact}` : `unrecognised key ${e.idempotencyKey}`;
  });
  const emailCount = (orderId: string, fact: EffectFact) => emailsByMail.get(`${orderId}/${fact}`) ?? 0;
  check(
    "one-confirmation-per-paid-order",
    "exactly 1 confirmation email per paid order (unless cancelled before it was paid), none for a failed payment",
    orders.flatMap((o) => {
      const cancelledUnpaid = o.view?.cancellation && o.view.cancellation.paymentStatus !== "Completed";
      const expected = paidOrder(o.view) && !cancelledUnpaid ? 1 : 0;
      const got = emailCount(o.orderId, "confirmationEmail");
      return o.view === null || got === expected
        ? []
        : [`order ${o.orderId}: ${got} confirmation emails, expected ${expected}`];
    }),
  );
  check(
    "one-shipping-email-per-completed-order",
    "exactly 1 shipping email per completed order, none for a failed payment",
    orders.flatMap((o) => {
      if (o.view === null) return [];
      const got = emailCount(o.orderId, "shippingEmail");
      if (o.view.status === "completed" && got !== 1) return [`order ${o.orderId}: ${got} shipping emails, expected 1`];
      if (o.view.status === "payment_failed" && got !== 0)
        return [`order ${o.orderId}: ${got} shipping emails for a failed payment`];
      return got > 1 ? [`order ${o.orderId}: ${got} shipping emails`] : [];
    }),
  );
  check(
    "one-picklist-per-paid-order",
    "exactly 1 picklist per paid order (at most 1 when cancelled, none when out of stock), none for a failed payment",
    orders.flatMap((o) => {
      if (o.view === null) return [];
      const got = picklistsByOrder.get(o.orderId) ?? 0;
      const expected = !paidOrder(o.view) || o.view.stock.rejected !== null ? [0] : o.view.cancellation ? [0, 1] : [1];
      return expected.includes(got) ? [] : [`order ${o.orderId}: ${got} picklists, expected ${expected.join(" or ")}`];
    }),
  );
  check(
    "at-most-one-shipment-per-order",
    "the warehouse shipped each order at most once, and the shop recorded that shipment",
    [
      ...[...shipmentsByOrder].filter(([, n]) => n > 1).map(([id, n]) => `order ${id} shipped ${n} times`),
      ...ledgers.warehouse.shipments.flatMap((s) => {
        const view = views[s.orderId];
        if (view?.status !== "completed") return [];
        return view.shipping.shipmentId === s.shipmentId
          ? []
          : [`order ${s.orderId}: shipped as ${s.shipmentId}, the shop recorded ${view.shipping.shipmentId ?? "none"}`];
      }),
    ],
  );

  for (const c of compensationChecks(orders, ledgers)) check(c.name, c.description, c.violations);

  if (input.integration) {
    const { views: integrationViews } = input.integration;
    check(
      "order-views-agree",
      "the order view built from integration events agrees with the order: payment, shipment and their ids, a complete timeline",
      orders.flatMap((o) =>
        o.view === null ? [] : viewDisagreements(o.orderId, o.view, integrationViews[o.orderId] ?? null),
      ),
    );
    check("integration-events-settled", "no integration event left parked behind a gap, none dead-lettered", [
      ...(input.integration.parkedAtEnd > 0 ? [`${input.integration.parkedAtEnd} events still parked`] : []),
      ...(input.integration.deadLetters > 0 ? [`${input.integration.deadLetters} dead letters`] : []),
    ]);
  }

  const unknownItems = unknownOutcomes(orders.map((o) => o.view).filter((v): v is OrderView => v !== null));
  const webhookDelivered = ledgers.warehouse.webhooks.filter((w) => w.outcome === "delivered");
  const recordedShipments = orders.reduce(
    (n, o) => n + (o.view?.history.filter((h) => h.type === "OrderShipped").length ?? 0),
    0,
  );
  const byStatus: Record<string, number> = {};
  for (const o of orders) {
    const status = o.view?.status ?? "missing";
    byStatus[status] = (byStatus[status] ?? 0) + 1;
  }
  const perOrder: Record<string, number> = {};
  for (const o of orders) {
    const n = String(chargesByOrder.get(o.orderId) ?? 0);
    perOrder[n] = (perOrder[n] ?? 0) + 1;
  }
  return {
    orders: { placed: orders.length, byStatus },
    charges: { total: ledgers.payment.charges.length, declines: ledgers.payment.declines.length, perOrder },
    refunds: {
      total: ledgers.payment.refunds.length,
      amount: ledgers.payment.refunds.reduce((n, r) => n + r.amount, 0),
      charged: ledgers.payment.charges.reduce((n, c) => n + c.amount, 0),
    },
    emails: { total: ledgers.email.emails.length, keys: emailsByKey.size, maxPerKey: max(emailsByKey) },
    picklists: {
      total: ledgers.warehouse.picklists.length,
      orders: picklistsByOrder.size,
      maxPerOrder: max(picklistsByOrder),
      stockouts: ledgers.warehouse.stockouts.length,
      cancelled: ledgers.warehouse.cancellations.length,
      shortShipped: ledgers.warehouse.shortages.length,
    },
    shipments: {
      total: ledgers.warehouse.shipments.length,
      maxPerOrder: max(shipmentsByOrder),
      shippedBeforeCancel: orders.filter((o) => o.view?.cancellation?.shippedBeforeCancel).length,
    },
    duplicates: {
      webhookDeliveriesBeyondFirst: webhookDelivered.length - new Set(webhookDelivered.map((w) => w.eventId)).size,
      webhookDuplicatesRecordedTwice: Math.max(0, recordedShipments - ledgers.warehouse.shipments.length),
      clientReplaysAnswered: input.client.replayedAnswers,
      clientRetries: input.client.retried,
      inboxDuplicatesAtLeast: input.worker.inboxDuplicatesAtLeast,
      sameKeyRetriesAtLeast: input.worker.sameKeyRetriesAtLeast,
    },
    unknown: {
      total: unknownItems.length,
      byVia: Object.fromEntries(countBy(unknownItems, (u) => u.settledVia)),
      items: unknownItems,
    },
    operator: input.operator,
    worker: input.worker,
    checks,
    violated: checks.filter((c) => !c.ok).map((c) => c.name),
  };
}

/**
 * Effects that went Unknown at least once, from the order histories (which span the order's,
 * payment's and shipment's streams), and how each was settled. Each effect is read in the stream
 * that owns it (`FACT_STREAM`): the order's own `PaymentFailed` is an integration fact, not the
 * payment effect's failure.
 */
export function unknownOutcomes(views: OrderView[]): UnknownOutcome[] {
  const out: UnknownOutcome[] = [];
  for (const view of views) {
    for (const fact of EFFECT_FACTS) {
      // By key: an effect asked for again after a definite failure (a picklist, a mail) has one
      // key per attempt, each settled on its own.
      const byKey = new Map<string, { stage: Stage; via: Via | undefined }[]>();
      for (const h of view.history) {
        if (parseAddress(h.stream).type !== FACT_STREAM[fact]) continue;
        const staged = EVENT_STAGE.get(h.type);
        if (staged?.fact !== fact) continue;
        const data = h.data as { key?: string; via?: Via };
        const key = data.key ?? effectKey(view.orderId, fact);
        byKey.set(key, [...(byKey.get(key) ?? []), { stage: staged.stage, via: data.via }]);
      }
      for (const [key, stages] of byKey) {
        if (!stages.some((s) => s.stage === "unknown" || s.stage === "reconcile")) continue;
        const final = stages.find((s) => s.stage === "completed" || s.stage === "failed");
        out.push({
          key,
          fact,
          settledVia: final?.via ?? "unresolved",
          outcome: final ? (final.stage === "completed" ? "Completed" : "Failed") : "Unknown",
        });
      }
    }
  }
  return out;
}
