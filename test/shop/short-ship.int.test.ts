import { beforeAll, describe, expect, it } from "vitest";
import { refundKey } from "../../examples/shop/ordering/refunds.js";
import type { OrderView } from "../../examples/shop/service/order-view.js";
import { useTempShop } from "../support/temp-shop.js";

// A short shipment over the real wiring: the shop with its in-process providers and a SQLite journal.
// The warehouse accepts the picklist, then reports a line it cannot ship through its signed webhook;
// Shipping records and publishes LinesUnavailable, the order refunds that line's amount under the
// adjustment's key and mails the customer, and the rest ships. The ledgers are the ground truth.

const { shop, call, ledger } = useTempShop("short");
const order = {
  email: "ada@example.com",
  currency: "EUR",
  lines: [
    { sku: "book", quantity: 2, unitPrice: 1250 },
    { sku: "pen", quantity: 3, unitPrice: 180 },
  ],
};

beforeAll(async () => {
  // Every accepted picklist comes up short, and every webhook is delivered twice.
  const set = await fetch(`${shop().providerUrls.warehouse}/faults`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ shortShipRate: 1, duplicateRate: 1 }),
  });
  expect(set.status).toBe(200);
});

describe("a line the warehouse cannot ship after accepting the picklist", () => {
  it("is refunded once, exactly its amount, under its adjustment's key; the customer is mailed; the rest ships", async () => {
    const placed = await call("POST", "/orders", order, { "idempotency-key": "short-1" });
    expect(placed.status).toBe(201);
    const id = placed.body.orderId as string;
    await expect
      .poll(async () => (await call("GET", `/orders/${id}`)).body.status, { timeout: 20_000 })
      .toBe("completed");
    const view = (await call("GET", `/orders/${id}`)).body as OrderView;

    const warehouse = await ledger("warehouse");
    const shortages = warehouse.shortages.filter((s) => s.orderId === id);
    expect(shortages).toHaveLength(1);
    const shortage = shortages[0] as (typeof shortages)[number];
    const missing = shortage.lines[0] as { sku: string; quantity: number };
    const price = order.lines.find((l) => l.sku === missing.sku)?.unitPrice ?? 0;

    // The order recorded the adjustment the warehouse reported (once, although delivered twice).
    expect(view.stock.shortages).toEqual([{ adjustmentId: shortage.adjustmentId, lines: shortage.lines }]);

    const charges = (await ledger("payment")).charges.filter((c) => c.orderId === id);
    const refunds = (await ledger("payment")).refunds.filter((r) => r.orderId === id);
    expect(charges).toHaveLength(1);
    expect(refunds.map((r) => [r.idempotencyKey, r.amount, r.paymentId])).toEqual([
      [refundKey(id, shortage.adjustmentId), missing.quantity * price, charges[0]?.paymentId],
    ]);

    const mails = (await ledger("email")).emails.filter((e) => e.idempotencyKey === `order:${id}:stock-email`);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.to).toBe(order.email);

    // The rest shipped, once, and the order knows its shipment.
    const shipments = warehouse.shipments.filter((s) => s.orderId === id);
    expect(shipments).toHaveLength(1);
    expect(view.shipping.shipmentId).toBe(shipments[0]?.shipmentId);
    const ordered = order.lines.map(({ sku, quantity }) => ({ sku, quantity }));
    const rest = ordered.flatMap((l) => {
      const quantity = l.sku === missing.sku ? l.quantity - missing.quantity : l.quantity;
      return quantity > 0 ? [{ sku: l.sku, quantity }] : [];
    });
    expect(shipments[0]?.lines).toEqual(rest);
    // Both webhooks were delivered twice; the shipment's inbox answered the repeats.
    const delivered = warehouse.webhooks.filter((w) => w.outcome === "delivered" && w.adjustmentId !== undefined);
    expect(delivered.map((w) => w.eventId)).toEqual([shortage.eventId, shortage.eventId]);
  });
});
