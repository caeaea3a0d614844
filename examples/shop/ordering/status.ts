import { isFinalStatus } from "oncely";
import { refundsFailedForGood, refundsSettled } from "./refunds.js";
import { shipmentDeadlineReasons } from "./shipment-deadline.js";
import type { OrderState } from "./state.js";

/**
 * The order's summary status, computed from its facts at read time and never stored, so it can
 * never contradict them (seed 2: "status computed at query time").
 *
 * - `attention`: an effect waits in the reconciliation queue, or the facts contradict each other
 *   (goods shipped for a failed payment, a shipment for an order never placed), or an effect after
 *   payment definitely failed for good (a mail refused on its last attempt, a picklist the
 *   warehouse rejected), or the shipment missed its deadline (until it arrives).
 *   Each reason is listed by `attentionReasons`.
 * - `cancelled`: cancelled, and settled: the payment failed, or it was refunded in full, and the
 *   cancellation mail went out (the order may also have shipped, recorded as shipped before cancel).
 * - `out_of_stock`: the warehouse refused the picklist; refunded in full and the customer told.
 * - `refunding`: cancelled or out of stock, and the refund or the mail is still under way (or the
 *   payment outcome is still unknown).
 * - `payment_failed`: the payment definitely failed; nothing else was started.
 * - `completed`: paid, both mails sent, shipped; lines the warehouse could not ship refunded and the customer told.
 * - `shipped`: the warehouse reported the shipment (even before the payment outcome arrived).
 * - `paid`: payment completed.
 * - `placed`: the order exists; the payment is pending or its outcome unknown.
 */
export type OrderStatus =
  | "placed"
  | "paid"
  | "shipped"
  | "completed"
  | "payment_failed"
  | "cancelled"
  | "out_of_stock"
  | "refunding"
  | "attention";

/**
 * The statuses an order never leaves. The demo's progress, its audit and its end-to-end throughput
 * all count these; a cancelled or out-of-stock order has ended as surely as a completed one.
 */
export const ENDED_STATUSES: readonly OrderStatus[] = ["completed", "payment_failed", "cancelled", "out_of_stock"];

export function attentionReasons(state: OrderState): string[] {
  const reasons: string[] = [];
  const effects = [
    ["payment", state.payment, 1],
    ["confirmation email", state.confirmationEmail, state.confirmationEmail.attempt],
    ["picklist", state.picklist, 1],
    ["shipping email", state.shippingEmail, state.shippingEmail.attempt],
    ["cancellation email", state.cancellationEmail, state.cancellationEmail.attempt],
    ["out-of-stock email", state.stockEmail, state.stockEmail.attempt],
  ] as const;
  for (const [name, fact, attempt] of effects) {
    if (fact.needsReconciliation) reasons.push(`${name} outcome unknown: waits in reconciliation`);
    // A mail's fact is its current attempt, and a failed attempt with attempts left is followed by
    // the next one in the same commit: a Failed mail here is one whose attempts are spent. Except
    // the purchase's mails of a cancelled order, never asked again: the customer no longer needs
    // them (the shop's simulator found such an order ending in attention).
    const unwanted = state.cancellation !== null && (name === "confirmation email" || name === "shipping email");
    if (name !== "payment" && fact.status === "Failed" && !unwanted) {
      reasons.push(`${name} failed${attempt > 1 ? ` (attempt ${attempt})` : ""}: ${fact.reason ?? "no reason"}`);
    }
  }
  // A refund's failed attempt is followed by the next one in the same commit: only the last, spent, counts.
  for (const r of state.refunds) {
    if (r.needsReconciliation) reasons.push(`refund ${r.key} outcome unknown: waits in reconciliation`);
  }
  for (const r of refundsFailedForGood(state)) reasons.push(`refund ${r.key} failed: ${r.reason ?? "no reason"}`);
  const shipped = state.shipping.status === "Completed";
  if (shipped && state.payment.status === "Failed") reasons.push("shipped although the payment failed");
  if (shipped && state.details === null) reasons.push("shipment recorded for an order that was never placed");
  if (shipped && state.stock.rejected !== null) reasons.push("shipped although the warehouse refused the picklist");
  reasons.push(...shipmentDeadlineReasons(state));
  return reasons;
}

/** Undefined for an order with no facts at all (never placed, nothing recorded). */
export function deriveStatus(state: OrderState): OrderStatus | undefined {
  if (attentionReasons(state).length > 0) return "attention";
  if (state.details === null) return undefined;
  const compensation = state.cancellation
    ? state.cancellationEmail
    : state.stock.rejected !== null
      ? state.stockEmail
      : undefined;
  if (compensation) {
    const settled = isFinalStatus(state.payment.status) && refundsSettled(state) && compensation.status === "Completed";
    if (!settled) return "refunding";
    return state.cancellation ? "cancelled" : "out_of_stock";
  }
  if (state.payment.status === "Failed") return "payment_failed";
  const shipped = state.shipping.status === "Completed";
  if (
    shipped &&
    state.payment.status === "Completed" &&
    state.confirmationEmail.status === "Completed" &&
    state.shippingEmail.status === "Completed" &&
    refundsSettled(state) &&
    state.shipping.adjustmentIds.every((id) => state.stock.shortages.some((s) => s.adjustmentId === id)) &&
    (state.stock.shortages.length === 0 || state.stockEmail.status === "Completed")
  ) {
    return "completed";
  }
  if (shipped) return "shipped";
  if (state.payment.status === "Completed") return "paid";
  return "placed";
}
