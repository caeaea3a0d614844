import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shipmentDeadlineKey } from "../../examples/shop/ordering/shipment-deadline.js";
import type { OrderView } from "../../examples/shop/service/order-view.js";
import { type Shop, startShop } from "../../examples/shop/service/shop.js";

// The whole shop over HTTP (SQLite journal, in-process providers and transport) with a warehouse
// that holds its shipment webhooks back far past the shop's shipment deadline: to the shop the
// shipment is lost, until it arrives late.

const DEADLINE_MS = 1_500;
const HELD_BACK_MS = 6_000;
let dir: string;
let shop: Shop;

async function json(method: string, url: string, body?: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${url}`).toBeLessThan(300);
  return response.json();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "oncely-shop-deadline-"));
  shop = await startShop({
    port: 0,
    databaseUrl: `sqlite:${join(dir, "shop.db")}`,
    dataDir: dir,
    effectTimeoutMs: 1000,
    shipmentDeadlineMs: DEADLINE_MS,
    // The warehouse is asked long after this deadline and the late webhook: the deadline path alone.
    shipmentCheckMs: 60_000,
  });
  await json("POST", `${shop.providerUrls.warehouse}/faults`, { lateRate: 1, lateMs: HELD_BACK_MS });
});
afterAll(async () => {
  await shop?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("an order whose shipment does not come in time", () => {
  it("needs attention with the reason once the deadline passes, and goes on to shipped when the shipment lands late", async () => {
    const placed = await json("POST", `${shop.url}/orders`, {
      email: "ada@example.com",
      currency: "EUR",
      lines: [{ sku: "book", quantity: 1, unitPrice: 1200 }],
    });
    const orderId = (placed as { orderId: string }).orderId;
    const view = () => json("GET", `${shop.url}/orders/${orderId}`) as Promise<OrderView>;

    await expect.poll(async () => (await view()).picklist.status, { timeout: 20_000, interval: 100 }).toBe("Completed");
    await expect.poll(async () => (await view()).status, { timeout: 20_000, interval: 100 }).toBe("attention");
    const attention = await view();
    expect(attention.shipping.status).not.toBe("Completed");
    expect(attention.attention).toEqual([
      expect.stringMatching(/^no shipment within 1500 ms of the picklist's acceptance/),
    ]);
    const events = await shop.journal.readStream(`order/${orderId}`);
    expect(events.filter((e) => e.type === "ShipmentDeadlineMissed")).toHaveLength(1);
    expect(await shop.journal.getOutbox(shipmentDeadlineKey(orderId))).toMatchObject({
      status: "done",
      outcome: "fired",
    });

    // The late shipment still lands and clears the reason.
    await expect
      .poll(async () => (await view()).status, { timeout: 30_000, interval: 200 })
      .toMatch(/^(shipped|completed)$/);
    expect((await view()).attention).toEqual([]);
  });
});
