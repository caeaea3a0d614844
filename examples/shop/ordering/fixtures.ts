import type { DecideContext } from "oncely";
import type { PlaceOrder } from "./commands.js";

/** The order the ordering tests are about, and the context its decider is called with. */
export const id = "42";
export const orderContext = (version: number): DecideContext => ({
  address: `order/${id}`,
  id,
  now: Date.UTC(2026, 0, 1),
  messageId: undefined,
  version,
});

/** Two books and a pen: 2,800 in all, the pen 300 (a line that can come up short). */
export const bookAndPen: PlaceOrder = {
  type: "PlaceOrder",
  customerEmail: "ada@example.com",
  currency: "EUR",
  lines: [
    { sku: "book", quantity: 2, unitPrice: 1250 },
    { sku: "pen", quantity: 1, unitPrice: 300 },
  ],
};
