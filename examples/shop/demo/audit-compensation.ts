import { effectOfKey } from "../ordering/effects.js";
import { refundBase, refundKey } from "../ordering/refunds.js";
import type { OrderView } from "../service/order-view.js";
import type { Ledgers } from "./ledgers.js";

/**
 * The audit's invariants of compensation (cancellations, out-of-stock and short shipments answered
 * with refunds), read from the providers' ledgers, the ground truth: a refund in the payment ledger
 * is money given back, a shipment in the warehouse's is goods gone, a shortage in the warehouse's
 * is lines it said it cannot ship, whatever the shop believes. Only the unit prices come from the
 * order (the providers never see them).
 */

interface AuditedOrder {
  orderId: string;
  view: OrderView | null;
}
interface CompensationCheck {
  name: string;
  description: string;
  violations: string[];
}

const sum = (items: readonly { amount: number }[]) => items.reduce((total, i) => total + i.amount, 0);

export function compensationChecks(orders: readonly AuditedOrder[], ledgers: Ledgers): CompensationCheck[] {
  const { charges, refunds } = ledgers.payment;
  const chargesOf = (orderId: string) => charges.filter((c) => c.orderId === orderId);
  const refundsOf = (orderId: string) => refunds.filter((r) => r.orderId === orderId);
  const shippedOrders = new Set(ledgers.warehouse.shipments.map((s) => s.orderId));
  const stockoutOrders = new Set(ledgers.warehouse.stockouts.map((s) => s.orderId));
  const cancelled = orders.filter((o) => o.view?.cancellation);
  const checks: CompensationCheck[] = [];

  checks.push({
    name: "cancelled-charged-refunded-once-in-full",
    description: "every cancelled order that was charged is refunded exactly once per refund key, and in full",
    violations: cancelled.flatMap(({ orderId }) => {
      const charged = sum(chargesOf(orderId));
      const back = refundsOf(orderId);
      const keys = new Set(back.map((r) => r.idempotencyKey));
      const problems: string[] = [];
      if (keys.size !== back.length) problems.push(`order ${orderId}: ${back.length} refunds under ${keys.size} keys`);
      if (sum(back) !== charged) problems.push(`order ${orderId}: charged ${charged}, refunded ${sum(back)}`);
      return problems;
    }),
  });
  checks.push({
    name: "no-refund-without-charge",
    description: "every refund in the payment ledger refunds a charge in it",
    violations: refunds
      .filter((r) => !charges.some((c) => c.paymentId === r.paymentId))
      .map((r) => `refund ${r.refundId} (${r.idempotencyKey}) of ${r.paymentId}: no such charge`),
  });
  checks.push({
    name: "refunds-within-charges",
    description: "the refunds of each charge never add up to more than it",
    violations: charges.flatMap((c) => {
      const back = sum(refunds.filter((r) => r.paymentId === c.paymentId));
      return back > c.amount ? [`payment ${c.paymentId}: charged ${c.amount}, refunded ${back}`] : [];
    }),
  });
  checks.push({
    name: "cancelled-not-shipped-unless-recorded",
    description: "no cancelled order shipped unless the order recorded it as shipped before the cancel",
    violations: cancelled
      .filter((o) => shippedOrders.has(o.orderId) && !o.view?.cancellation?.shippedBeforeCancel)
      .map((o) => `order ${o.orderId} was cancelled and shipped, not recorded as shipped-before-cancel`),
  });
  checks.push({
    name: "out-of-stock-refunded",
    description: "every charged order the warehouse refused (out of stock) and never shipped is refunded in full",
    violations: orders.flatMap(({ orderId }) => {
      if (!stockoutOrders.has(orderId) || shippedOrders.has(orderId)) return [];
      const charged = sum(chargesOf(orderId));
      const back = sum(refundsOf(orderId));
      return back === charged ? [] : [`order ${orderId}: out of stock, charged ${charged}, refunded ${back}`];
    }),
  });
  const views = new Map(orders.map((o) => [o.orderId, o.view]));
  checks.push({
    name: "short-shipped-lines-refunded-once",
    description:
      "every adjustment the warehouse reported (lines it cannot ship) of a charged order not cancelled is refunded once, exactly those lines' amount, under its own key",
    violations: ledgers.warehouse.shortages.flatMap((shortage) => {
      const { orderId, adjustmentId } = shortage;
      const view = views.get(orderId);
      // A cancelled order is refunded in full instead (checked above), whatever the warehouse reported.
      if (view?.cancellation || chargesOf(orderId).length === 0) return [];
      const key = refundKey(orderId, adjustmentId);
      const back = refundsOf(orderId).filter((r) => refundBase(r.idempotencyKey) === key);
      const expected = missingAmount(view?.lines ?? [], shortage.lines);
      const problems: string[] = [];
      if (back.length !== 1) problems.push(`order ${orderId}, adjustment ${adjustmentId}: ${back.length} refunds`);
      if (sum(back) !== expected) {
        problems.push(
          `order ${orderId}, adjustment ${adjustmentId}: missing lines worth ${expected}, refunded ${sum(back)}`,
        );
      }
      return problems;
    }),
  });
  const stockMails = (orderId: string) =>
    ledgers.email.emails.filter(
      (e) => e.orderId === orderId && effectOfKey(orderId, e.idempotencyKey)?.fact === "stockEmail",
    ).length;
  const stockProblems = new Set([...stockoutOrders, ...ledgers.warehouse.shortages.map((s) => s.orderId)]);
  // A refusal the shipment learns of after the order was cancelled is welcome and not announced
  // (shipping/actor.ts): the customer has the cancellation mail and the full refund. Whether it came
  // before or after the cancel is a race no ledger tells, so a cancelled order may have 0 or 1.
  const cancelledIds = new Set(cancelled.map((o) => o.orderId));
  checks.push({
    name: "one-stock-mail-per-short-or-refused-order",
    description:
      "exactly 1 stock email per charged order the warehouse refused or short-shipped (at most 1 when the order was cancelled)",
    violations: [...stockProblems].flatMap((orderId) => {
      if (chargesOf(orderId).length === 0) return [];
      const got = stockMails(orderId);
      if (got === 1 || (got === 0 && cancelledIds.has(orderId))) return [];
      return [`order ${orderId}: ${got} stock emails, expected ${cancelledIds.has(orderId) ? "at most " : ""}1`];
    }),
  });
  const cancellationMails = (orderId: string) =>
    ledgers.email.emails.filter(
      (e) => e.orderId === orderId && effectOfKey(orderId, e.idempotencyKey)?.fact === "cancellationEmail",
    ).length;
  checks.push({
    name: "one-cancellation-mail-per-cancelled-order",
    description: "exactly 1 cancellation email per cancelled order, none for any other",
    violations: orders.flatMap(({ orderId, view }) => {
      const expected = view?.cancellation ? 1 : 0;
      const got = cancellationMails(orderId);
      return got === expected ? [] : [`order ${orderId}: ${got} cancellation emails, expected ${expected}`];
    }),
  });
  // Refund keys are the order's: a refund under another key is not one the shop asked for.
  checks.push({
    name: "refund-keys-are-the-orders",
    description: "every refund was asked for under one of its order's refund keys",
    violations: refunds
      .filter(
        (r) => r.idempotencyKey !== refundKey(r.orderId) && !r.idempotencyKey.startsWith(`${refundKey(r.orderId)}:`),
      )
      .map((r) => `refund ${r.refundId} under foreign key ${r.idempotencyKey}`),
  });
  return checks;
}

/** What the missing lines cost at the order's prices (never more of a sku than was ordered). */
function missingAmount(
  ordered: readonly { sku: string; quantity: number; unitPrice: number }[],
  missing: readonly { sku: string; quantity: number }[],
): number {
  return missing.reduce((total, line) => {
    const match = ordered.find((o) => o.sku === line.sku);
    return match ? total + Math.min(line.quantity, match.quantity) * match.unitPrice : total;
  }, 0);
}
