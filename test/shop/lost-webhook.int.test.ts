import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWarehouseProvider, type WarehouseProvider } from "../../examples/shop/providers/warehouse/server.js";
import type { OrderView } from "../../examples/shop/service/order-view.js";
import { type Shop, startShop } from "../../examples/shop/service/shop.js";
import { shipmentCheckKey } from "../../examples/shop/shipping/shipment-check.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { callShop, signedHeaders } from "../support/shop-http.js";

// The whole shop over HTTP with a warehouse that ships but never sends its webhooks (lost for
// good, as when it gives up on its retries while the shop restarts), on SQLite and PostgreSQL.
// The shipment deadline is the default 15 minutes; the shipment asks the warehouse 300 ms after
// the picklist's acceptance, so an order ends shipped by the check alone, long before it.

const SECRET = "lost-webhook-test-webhook-secret";
const CHECK_MS = 300;

const postgres = await probePostgres();
const backends = [
  { name: "sqlite", skip: "" },
  { name: "postgres", skip: postgres.available ? "" : `(skipped: ${postgres.reason})` },
];

for (const backend of backends) {
  describe.skipIf(backend.skip !== "")(`an order whose warehouse webhooks are lost, on ${backend.name}`, () => {
    let dir: string;
    let warehouse: WarehouseProvider;
    let shop: Shop;
    let drop = async () => {};

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), `oncely-lost-webhook-${backend.name}-`));
      let databaseUrl = `sqlite:${join(dir, "shop.db")}`;
      if (backend.name === "postgres") {
        const fresh = await freshPgSchema("lost_webhook");
        databaseUrl = `${PG_URL}?schema=${fresh.schema}`;
        drop = fresh.drop;
      }
      warehouse = await startWarehouseProvider({
        webhookSecret: SECRET,
        shipDelayMs: 0,
        faults: { lostWebhookRate: 1 },
      });
      shop = await startShop({
        port: 0,
        databaseUrl,
        dataDir: dir,
        warehouseUrl: warehouse.url,
        webhookSecret: SECRET,
        effectTimeoutMs: 1000,
        shipmentCheckMs: CHECK_MS,
      });
      warehouse.setShopUrl(shop.url);
    });
    afterAll(async () => {
      await shop?.close();
      await warehouse?.close();
      await drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const place = async (lines: { sku: string; quantity: number; unitPrice: number }[]) => {
      const placed = await callShop(shop.url, "POST", "/orders", { email: "ada@example.com", currency: "EUR", lines });
      expect(placed.status).toBeLessThan(300);
      return placed.body.orderId as string;
    };
    const view = async (orderId: string) => (await callShop(shop.url, "GET", `/orders/${orderId}`)).body as OrderView;
    const completed = (orderId: string) =>
      expect.poll(async () => (await view(orderId)).status, { timeout: 20_000, interval: 100 }).toBe("completed");

    it("ends completed by asking the warehouse, and the webhook arriving after all is a duplicate", async () => {
      const orderId = await place([{ sku: "book", quantity: 1, unitPrice: 1200 }]);
      await completed(orderId);

      const shipment = warehouse.ledger.shipments.find((s) => s.orderId === orderId);
      if (!shipment) throw new Error("the warehouse never shipped");
      const webhooks = warehouse.ledger.webhooks.filter((w) => w.eventId === shipment.eventId);
      expect(webhooks.map((w) => w.outcome)).toEqual(["lost"]);
      const final = await view(orderId);
      expect(final.attention).toEqual([]);
      expect(final.shipping).toMatchObject({ status: "Completed", shipmentId: shipment.shipmentId });

      // Recorded as the webhook would have been: the warehouse's own event id, shipment id and time.
      const events = await shop.journal.readStream(`shipment/${orderId}`);
      expect(events.map((e) => e.type)).toEqual([
        "ShippingStarted",
        "PicklistRequested",
        "PicklistAccepted",
        "ShipmentCheckRequested",
        "ShipmentCheckAnswered",
        "ShipmentRecorded",
      ]);
      expect(events.at(-1)?.data).toMatchObject({
        eventId: shipment.eventId,
        shipmentId: shipment.shipmentId,
        occurredAt: shipment.at,
      });
      expect(await shop.journal.getOutbox(shipmentCheckKey(orderId, 1))).toMatchObject({ status: "done" });
      const orderEvents = await shop.journal.readStream(`order/${orderId}`);
      expect(orderEvents.filter((e) => e.type === "ShipmentDeadlineMissed")).toEqual([]);

      // The warehouse's webhook, delivered late after all: a duplicate, no second transition.
      const body = JSON.stringify({
        eventId: shipment.eventId,
        type: "OrderShipped",
        orderId,
        shipmentId: shipment.shipmentId,
        occurredAt: shipment.at,
      });
      const late = await callShop(shop.url, "POST", "/webhooks/warehouse", body, {
        "content-type": "application/json",
        ...signedHeaders(SECRET, body),
      });
      expect(late.status, JSON.stringify(late.body)).toBe(200);
      expect(late.body).toMatchObject({ duplicate: true, shipmentId: shipment.shipmentId });
      const after = await shop.journal.readStream(`shipment/${orderId}`);
      expect(after.filter((e) => e.type === "ShipmentRecorded")).toHaveLength(1);
      // Published by the shipment's commit itself (the journal transport): one entry in the log.
      const published = (await shop.journal.readPublished(0))
        .map((entry) => JSON.parse(entry.body) as { type: string; aggregateId: string })
        .filter((e) => e.type === "OrderShipped" && e.aggregateId === orderId);
      expect(published).toHaveLength(1);
      expect((await view(orderId)).status).toBe("completed");
    });

    it("learns a lost shortage with the shipment, and refunds the missing line before the order completes", async () => {
      warehouse.setFaults({ shortShipRate: 1 });
      const orderId = await place([
        { sku: "book", quantity: 1, unitPrice: 1200 },
        { sku: "pen", quantity: 2, unitPrice: 300 },
      ]);
      await completed(orderId);
      warehouse.setFaults({ shortShipRate: 0 });

      const shortage = warehouse.ledger.shortages.find((s) => s.orderId === orderId);
      if (!shortage) throw new Error("the warehouse reported no shortage");
      expect(warehouse.ledger.webhooks.filter((w) => w.eventId === shortage.eventId).map((w) => w.outcome)).toEqual([
        "lost",
      ]);
      const missing = shortage.lines.reduce((n, l) => n + l.quantity * (l.sku === "book" ? 1200 : 300), 0);
      const final = await view(orderId);
      expect(final.refunds).toEqual([
        expect.objectContaining({ key: `order:${orderId}:refund:${shortage.adjustmentId}`, amount: missing }),
      ]);
      const types = (await shop.journal.readStream(`shipment/${orderId}`)).map((e) => e.type);
      expect(types.slice(-3)).toEqual(["ShipmentCheckAnswered", "LinesReportedUnavailable", "ShipmentRecorded"]);
    });

    it("asks for a shortage whose webhook alone was lost when the shipment's webhook names it, and refunds it", async () => {
      warehouse.setFaults({ lostWebhookRate: 0, shortShipRate: 1, lostShortageWebhookRate: 1 });
      const orderId = await place([
        { sku: "book", quantity: 1, unitPrice: 1200 },
        { sku: "pen", quantity: 2, unitPrice: 300 },
      ]);
      await completed(orderId);
      warehouse.setFaults({ lostWebhookRate: 1, shortShipRate: 0, lostShortageWebhookRate: 0 });

      const shortage = warehouse.ledger.shortages.find((s) => s.orderId === orderId);
      const shipment = warehouse.ledger.shipments.find((s) => s.orderId === orderId);
      if (!shortage || !shipment) throw new Error("the warehouse reported no shortage, or never shipped");
      const outcomes = (eventId: string) =>
        warehouse.ledger.webhooks.filter((w) => w.eventId === eventId).map((w) => w.outcome);
      expect(outcomes(shortage.eventId)).toEqual(["lost"]);
      expect(outcomes(shipment.eventId)).toContain("delivered");
      // Completed only with the missing line refunded: the OrderShipped named the adjustment it waited for.
      const missing = shortage.lines.reduce((n, l) => n + l.quantity * (l.sku === "book" ? 1200 : 300), 0);
      const final = await view(orderId);
      expect(final.refunds).toEqual([
        expect.objectContaining({ key: `order:${orderId}:refund:${shortage.adjustmentId}`, amount: missing }),
      ]);
      const types = (await shop.journal.readStream(`shipment/${orderId}`)).map((e) => e.type);
      expect(types.slice(-4)).toEqual([
        "ShipmentRecorded",
        "ShipmentCheckRequested",
        "ShipmentCheckAnswered",
        "LinesReportedUnavailable",
      ]);
    });
  });
}
