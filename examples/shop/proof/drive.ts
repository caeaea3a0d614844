import type { Runtime } from "oncely";
import type { OrderState } from "../ordering/state.js";
import { deriveStatus } from "../ordering/status.js";

/**
 * The workload of one crash-matrix cell, driven through the runtime (the HTTP layer is not what
 * the matrix tests): place `orders` orders, each with a stable message id, and wait until every
 * one is terminal. Safe to run again after a crash: a repeated PlaceOrder is answered from the
 * inbox, so a restarted process simply carries on.
 */
export interface CellOrder {
  orderId: string;
  key: string;
  command: {
    type: "PlaceOrder";
    customerEmail: string;
    currency: string;
    lines: { sku: string; quantity: number; unitPrice: number }[];
  };
}

export function cellOrders(count: number): CellOrder[] {
  return Array.from({ length: count }, (_, i) => ({
    orderId: `m${i + 1}`,
    key: `matrix-${i + 1}`,
    command: {
      type: "PlaceOrder",
      customerEmail: `m${i + 1}@example.com`,
      currency: "EUR",
      // The third order ends in 13: the payment provider declines it, so a failed path is covered too.
      lines: [{ sku: "book", quantity: 1, unitPrice: i === 2 ? 1213 : 1000 + 100 * i }],
    },
  }));
}

export const TERMINAL = new Set(["completed", "payment_failed"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function driveOrders(runtime: Runtime, orders: CellOrder[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const order of orders) {
    // A client retries until the shop answers (an injected fault or a dropped connection is an error here).
    for (;;) {
      try {
        await runtime.send(`order/${order.orderId}`, order.command, { messageId: `place:${order.key}` });
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(50);
      }
    }
  }
  while (Date.now() < deadline) {
    let terminal = 0;
    for (const order of orders) {
      const status = await runtime
        .state<OrderState>(`order/${order.orderId}`)
        .then(({ state }) => deriveStatus(state))
        .catch(() => undefined);
      if (status && TERMINAL.has(status)) terminal++;
    }
    if (terminal === orders.length) return;
    await sleep(100);
  }
  throw new Error(`orders not terminal after ${timeoutMs} ms`);
}
