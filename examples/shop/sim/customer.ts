import { CommandRejectedError } from "oncely";
import type { SimAction, SimEnv } from "oncely/testing";
import type { CancelOrder } from "../ordering/cancellation.js";
import type { OrderState } from "../ordering/state.js";
import { acceptedOrders, reportedShortages, shippedOrders } from "./warehouse.js";

/**
 * The customer cancels an order at a moment the seed picks, as `POST /orders/:id/cancel` does:
 * `CancelOrder` with message id `cancel:{key}` (two keys per order, so a cancel is sometimes sent
 * again under the same key, answered by the inbox, and sometimes under another, answered by the
 * state). What it answers is where the order stood, just before, in the world (the warehouse's
 * stock room) and in the order: before the payment; paid and no picklist accepted; a picklist
 * accepted and not shipped; shipped but the order does not know yet (around the shipment: it ends
 * shipped-before-cancel); shipped as the order knows (refused, as the shop's 409); or, for an order
 * the warehouse reported short, after its partial refund was asked (`after-short-ship`).
 */
export const customerCancels: SimAction = {
  name: "cancel",
  async run(env, pick) {
    const orders = (await env.journal.listStreams("order/")).sort();
    // One cancel in three, when there is one, goes to an order the warehouse reported short: a
    // cancel after a partial refund must refund only what is left, and picked among all orders
    // it came too rarely for the default budget to be sure of it.
    const shortOrders = orders.filter((a) => reportedShortages(env).has(a.slice("order/".length)));
    const targeted = pick % 3 === 0 && shortOrders.length > 0;
    // Another one in three goes to an order that knows it shipped, if any: a cancel it refuses
    // needs the shipment recorded first, which picked among all orders came too rarely once lost
    // webhooks took their share of the moments.
    const shipped = pick % 3 === 1 ? await knownShipped(env, orders) : [];
    const address = targeted
      ? shortOrders[Math.floor(pick / 3) % shortOrders.length]
      : shipped.length > 0
        ? shipped[Math.floor(pick / 3) % shipped.length]
        : orders[pick % Math.max(1, orders.length)];
    if (!address) return undefined;
    const { state } = await env.runtime.state<OrderState>(address);
    if (!state.details) return undefined;
    const orderId = state.orderId;
    const moment = state.cancellation
      ? "again"
      : targeted
        ? "after-short-ship"
        : state.shipping.status === "Completed"
          ? "after-shipment"
          : shippedOrders(env).has(orderId)
            ? "around-shipment"
            : acceptedOrders(env).has(orderId)
              ? "before-shipment"
              : state.payment.status === "Completed"
                ? "before-picklist"
                : "before-payment";
    const command: CancelOrder = { type: "CancelOrder", reason: "changed my mind" };
    const key = Math.floor(pick / Math.max(1, orders.length)) % 2;
    try {
      await env.runtime.send(address, command, { messageId: `cancel:sim-${key}` });
    } catch (error) {
      // Shipped first: the shop answers 409 and records nothing.
      if (!(error instanceof CommandRejectedError)) throw error;
      return `${moment}:refused`;
    }
    return moment;
  },
};

/** Orders whose own state says they shipped and that no cancel reached yet. */
async function knownShipped(env: SimEnv, orders: readonly string[]): Promise<string[]> {
  const shipped: string[] = [];
  for (const address of orders) {
    const { state } = await env.runtime.state<OrderState>(address);
    if (state.details && !state.cancellation && state.shipping.status === "Completed") shipped.push(address);
  }
  return shipped;
}
