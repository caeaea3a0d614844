import type { Invariant, SimulatedProvider } from "oncely/testing";
import { EFFECT_KINDS, type RefundInput } from "../ordering/effects.js";
import { fullRefundCause, linesAmount, refundBase, refundKey } from "../ordering/refunds.js";
import type { OrderState } from "../ordering/state.js";
import { reportedShortages, shippedOrders } from "./warehouse.js";

/**
 * The simulator's invariants of compensation, read from the providers' ledgers (money back is a
 * refund the refund provider performed, goods gone is a shipment the warehouse made), against the
 * orders' final state once faults stopped and the world drained.
 */

type World = Parameters<Invariant["check"]>[0];

async function ordersOf(world: World): Promise<OrderState[]> {
  const orders: OrderState[] = [];
  for (const address of await world.journal.listStreams("order/")) {
    orders.push((await world.runtime.state<OrderState>(address)).state);
  }
  return orders;
}

/** Refunds the provider performed for a charge, by the key each was asked under. */
function performedRefunds(world: World, paymentId: string) {
  const provider = world.providers.find((p) => p.kind === EFFECT_KINDS.refund) as SimulatedProvider<RefundInput>;
  return provider.executions.filter(
    (e) => e.performed && e.result.outcome === "succeeded" && e.input.paymentId === paymentId,
  );
}
const total = (refunds: { input: RefundInput }[]) => refunds.reduce((sum, r) => sum + r.input.amount, 0);

/**
 * An order refunded in full (cancelled, or refused by the warehouse) and charged is given back
 * exactly its charge, and the full refund was performed once: whatever lines were refunded before,
 * the rest under `order:{id}:refund` (its attempts after definite failures included).
 */
export const refundedOnceInFull: Invariant = {
  name: "refunded-once-in-full",
  async check(world) {
    const problems: string[] = [];
    for (const order of await ordersOf(world)) {
      const paymentId = order.payment.resultId;
      const cause = fullRefundCause(order);
      if (!cause || order.payment.status !== "Completed" || paymentId === null) continue;
      const refunds = performedRefunds(world, paymentId);
      const full = refunds.filter((r) => refundBase(r.key) === refundKey(order.orderId));
      const amount = order.details?.amount;
      if (total(refunds) !== amount || full.length !== 1) {
        problems.push(
          `order ${order.orderId} (${cause}): charged ${amount}, refunded ${total(refunds)} in ${refunds.length} refunds, ${full.length} in full`,
        );
      }
    }
    return problems;
  },
};

/** No cancelled order's goods left the warehouse unless the order recorded that they shipped before the cancel. */
export const cancelledNotShippedUnlessRecorded: Invariant = {
  name: "cancelled-not-shipped-unless-recorded",
  async check(world) {
    const shipped = shippedOrders(world);
    const problems: string[] = [];
    for (const order of await ordersOf(world)) {
      if (!order.cancellation) continue;
      const recorded = order.cancellation.shippedBeforeCancel;
      if (shipped.has(order.orderId) !== recorded) {
        problems.push(
          `order ${order.orderId}: cancelled, ${shipped.has(order.orderId) ? "shipped" : "not shipped"} by the warehouse, shipped-before-cancel ${recorded}`,
        );
      }
    }
    return problems;
  },
};

/**
 * Every shortage the warehouse reported reached the order, and for a charged order not refunded
 * in full each adjustment was refunded once, exactly the missing lines at the order's prices.
 */
export const partialRefundsMatchMissingLines: Invariant = {
  name: "partial-refunds-match-missing-lines",
  async check(world) {
    const reported = reportedShortages(world);
    const problems: string[] = [];
    for (const order of await ordersOf(world)) {
      const report = reported.get(order.orderId);
      const recorded = order.stock.shortages.map((s) => s.adjustmentId);
      if (report && !recorded.includes(report.adjustmentId)) {
        problems.push(
          `order ${order.orderId}: the warehouse reported ${report.adjustmentId}, the order has [${recorded}]`,
        );
      }
      const paymentId = order.payment.resultId;
      if (fullRefundCause(order) || order.payment.status !== "Completed" || paymentId === null) continue;
      const refunds = performedRefunds(world, paymentId);
      for (const shortage of order.stock.shortages) {
        const mine = refunds.filter((r) => refundBase(r.key) === refundKey(order.orderId, shortage.adjustmentId));
        const expected = linesAmount(order, shortage.lines);
        if (mine.length !== 1 || total(mine) !== expected) {
          problems.push(
            `order ${order.orderId}, adjustment ${shortage.adjustmentId}: missing lines worth ${expected}, refunded ${total(mine)} in ${mine.length} refunds`,
          );
        }
      }
      if (total(refunds) !== order.stock.shortages.reduce((sum, s) => sum + linesAmount(order, s.lines), 0)) {
        problems.push(`order ${order.orderId}: refunds other than its adjustments'`);
      }
    }
    return problems;
  },
};
