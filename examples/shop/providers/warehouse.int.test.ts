import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SimulatedClock } from "oncely/testing";
import { afterEach, describe, expect, it } from "vitest";
import { SIGNATURE_HEADER, verifyWebhookSignature } from "./shared/webhook-signature.js";
import { get, post } from "./test-http.js";
import {
  type OrderShippedWebhook,
  startWarehouseProvider,
  type WarehouseProvider,
  type WarehouseProviderOptions,
} from "./warehouse/server.js";

/** A small shop stand-in: records every webhook and answers with the next status of a script. */
async function startReceiver(statuses: number[] = []) {
  const received: OrderShippedWebhook[] = [];
  const signed: { header: string | undefined; body: string }[] = [];
  const script = [...statuses];
  const server: Server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => {
      text += chunk;
    });
    request.on("end", () => {
      const status = script.shift() ?? 204;
      if (request.url === "/webhooks/warehouse" && status < 300) {
        received.push(JSON.parse(text));
        signed.push({ header: request.headers[SIGNATURE_HEADER] as string | undefined, body: text });
      }
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    received,
    signed,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});
const SECRET = "warehouse-test-webhook-secret";
async function start(options: Partial<WarehouseProviderOptions> = {}, receiverStatuses: number[] = []) {
  const receiver = await startReceiver(receiverStatuses);
  const warehouse: WarehouseProvider = await startWarehouseProvider({
    shopUrl: receiver.url,
    shipDelayMs: 5,
    webhook: { backoffMs: 5, maxBackoffMs: 20, ...options.webhook },
    webhookSecret: SECRET,
    ...options,
  });
  cleanup.push(receiver.close, warehouse.close);
  return { warehouse, receiver };
}

const picklist = {
  orderId: "42",
  lines: [
    { sku: "book", quantity: 2 },
    { sku: "pen", quantity: 1 },
  ],
};
const key = "order:42:picklist";

describe("warehouse provider", () => {
  it("accepts a picklist once per key, ships it once, and calls the shop's webhook", async () => {
    const { warehouse, receiver } = await start();
    const first = await post(warehouse.url, "/picklists", picklist, { key });
    expect(first).toEqual({ status: 202, body: { picklistId: expect.any(String) } });
    expect(await post(warehouse.url, "/picklists", picklist, { key })).toEqual(first);
    await warehouse.settled();
    expect(warehouse.ledger.picklists).toHaveLength(1);
    expect(warehouse.ledger.shipments).toHaveLength(1);
    const shipment = warehouse.ledger.shipments[0];
    expect(receiver.received).toEqual([
      {
        eventId: shipment?.eventId,
        type: "OrderShipped",
        orderId: "42",
        shipmentId: shipment?.shipmentId,
        occurredAt: shipment?.at,
      },
    ]);
    expect(await get(warehouse.url, `/picklists?idempotencyKey=${encodeURIComponent(key)}`)).toEqual({
      status: 200,
      body: { picklistId: first.body.picklistId, status: "shipped", shipmentId: shipment?.shipmentId, ...picklist },
    });
  });

  it("delivers the same event twice at duplicateRate 1, still shipping once", async () => {
    const { warehouse, receiver } = await start({ faults: { duplicateRate: 1 } });
    await post(warehouse.url, "/picklists", picklist, { key });
    await warehouse.settled();
    expect(warehouse.ledger.shipments).toHaveLength(1);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]).toEqual(receiver.received[0]);
  });

  it("signs every webhook call over the exact body it sends, with its own clock's time", async () => {
    const clock = new SimulatedClock();
    const { warehouse, receiver } = await start({ clock, shipDelayMs: 0, faults: { duplicateRate: 1 } });
    await post(warehouse.url, "/picklists", picklist, { key });
    clock.advance(0); // the shipment's timer (registered while the picklist was accepted)
    await expect.poll(() => receiver.signed.length).toBe(2);
    for (const { header, body } of receiver.signed) {
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      const check = (secret: string, nowMs: number) =>
        verifyWebhookSignature({ secret, header, rawBody: Buffer.from(body), nowMs, toleranceMs: 300_000 }).ok;
      expect(check(SECRET, clock.now())).toBe(true);
      expect(check("another-secret-of-some-length", clock.now())).toBe(false);
      expect(check(SECRET, clock.now() + 301_000)).toBe(false);
    }
  });

  it("retries the webhook until the shop answers 2xx", async () => {
    const { warehouse, receiver } = await start({}, [500, 503, 404]);
    await post(warehouse.url, "/picklists", picklist, { key });
    await warehouse.settled();
    expect(receiver.received).toHaveLength(1);
    expect(warehouse.ledger.webhooks.map((w) => w.outcome)).toEqual(["rejected", "rejected", "rejected", "delivered"]);
  });

  it("gives up after maxAttempts and records it", async () => {
    const { warehouse, receiver } = await start({ webhook: { maxAttempts: 2 } }, [500, 500, 500]);
    await post(warehouse.url, "/picklists", picklist, { key });
    await warehouse.settled();
    expect(receiver.received).toHaveLength(0);
    expect(warehouse.ledger.webhooks.map((w) => w.outcome)).toEqual(["rejected", "rejected", "gave-up"]);
  });

  it("holds a late webhook back lateMs after the shipment, then delivers it", async () => {
    const clock = new SimulatedClock();
    const { warehouse, receiver } = await start({ clock, shipDelayMs: 10, faults: { lateRate: 1, lateMs: 1000 } });
    await post(warehouse.url, "/picklists", picklist, { key });
    clock.advance(10);
    await expect.poll(() => warehouse.ledger.shipments.length).toBe(1);
    // Shipped, and the only timer left is the late delivery: nothing has been sent yet.
    expect(clock.nextDeadline()).toBe(clock.now() + 1000);
    expect(warehouse.ledger.webhooks).toHaveLength(0);
    clock.advance(1000);
    await warehouse.settled();
    expect(receiver.received).toHaveLength(1);
  });

  it("answers 409 for a key reused with other lines, 400 naming the field for bad input", async () => {
    const { warehouse } = await start();
    await post(warehouse.url, "/picklists", picklist, { key });
    expect(
      (await post(warehouse.url, "/picklists", { ...picklist, lines: [{ sku: "x", quantity: 1 }] }, { key })).status,
    ).toBe(409);
    const empty = await post(warehouse.url, "/picklists", { orderId: "1", lines: [] }, { key: "other" });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toContain("lines");
    const zero = await post(
      warehouse.url,
      "/picklists",
      { orderId: "1", lines: [{ sku: "a", quantity: 0 }] },
      { key: "other" },
    );
    expect(zero.body.error).toContain("lines.0.quantity");
    await warehouse.settled();
    expect(warehouse.ledger.picklists).toHaveLength(1);
  });

  it("dropAfterRate: accepts (and later ships) the picklist but resets the connection", async () => {
    const { warehouse, receiver } = await start({ faults: { dropAfterRate: 1 } });
    await expect(post(warehouse.url, "/picklists", picklist, { key })).rejects.toThrow(TypeError);
    await warehouse.settled();
    expect(warehouse.ledger.picklists).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
  });

  it("ships after a restart what it had accepted before, from its ledger file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oncely-warehouse-"));
    try {
      const ledgerPath = join(dir, "warehouse.jsonl");
      // A clock that never moves: the first warehouse accepts but never ships.
      const first = await start({ ledgerPath, clock: new SimulatedClock() });
      const accepted = await post(first.warehouse.url, "/picklists", picklist, { key });
      await first.warehouse.close();
      expect(first.warehouse.ledger.shipments).toHaveLength(0);

      const second = await start({ ledgerPath });
      await second.warehouse.settled();
      expect(second.warehouse.ledger.shipments).toEqual([
        expect.objectContaining({ picklistId: accepted.body.picklistId }),
      ]);
      expect(second.receiver.received).toHaveLength(1);
      expect(await post(second.warehouse.url, "/picklists", picklist, { key })).toEqual(accepted);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("warehouse provider: out of stock and cancellation", () => {
  it("outOfStockRate 1: refuses a picklist for good (422), records the stockout, answers the same again", async () => {
    const { warehouse } = await start({ faults: { outOfStockRate: 1 } });
    const refused = await post(warehouse.url, "/picklists", picklist, { key });
    expect(refused).toEqual({ status: 422, body: { status: "refused", reason: "out of stock: book, pen" } });
    warehouse.setFaults({ outOfStockRate: 0 });
    expect(await post(warehouse.url, "/picklists", picklist, { key })).toEqual(refused);
    expect(warehouse.ledger.stockouts).toEqual([expect.objectContaining({ orderId: "42", idempotencyKey: key })]);
    expect(warehouse.ledger.picklists).toEqual([]);
  });

  it("cancels an order's unshipped picklist: it never ships, and a later picklist for the order is refused", async () => {
    const { warehouse, receiver } = await start({ shipDelayMs: 200 });
    const { body } = await post(warehouse.url, "/picklists", picklist, { key });
    const cancel = { orderId: "42" };
    const cancelled = await post(warehouse.url, "/picklist-cancellations", cancel, { key: "order:42:picklist-cancel" });
    expect(cancelled).toEqual({ status: 200, body: { cancelled: [body.picklistId] } });
    expect(await post(warehouse.url, "/picklist-cancellations", cancel, { key: "order:42:picklist-cancel" })).toEqual(
      cancelled,
    );
    expect((await post(warehouse.url, "/picklists", picklist, { key: "order:42:picklist:2" })).status).toBe(422);
    await warehouse.settled();
    expect(warehouse.ledger.shipments).toEqual([]);
    expect(receiver.received).toEqual([]);
    expect(
      (await get(warehouse.url, "/picklist-cancellations?idempotencyKey=order%3A42%3Apicklist-cancel")).body,
    ).toEqual({
      status: "cancelled",
      orderId: "42",
      cancelled: [body.picklistId],
    });
  });

  it("refuses to cancel a picklist it already shipped (422), and records no cancellation", async () => {
    const { warehouse } = await start();
    await post(warehouse.url, "/picklists", picklist, { key });
    await warehouse.settled();
    const late = await post(warehouse.url, "/picklist-cancellations", { orderId: "42" }, { key: "c" });
    expect(late).toEqual({
      status: 422,
      body: { status: "refused", reason: expect.stringContaining("already shipped") },
    });
    expect(warehouse.ledger.cancellations).toEqual([]);
    expect(warehouse.ledger.shipments).toHaveLength(1);
  });
});

describe("warehouse provider: lines it cannot ship after accepting", () => {
  it("shortShipRate 1: accepts, reports one line unavailable (LinesUnavailable webhook, before OrderShipped), ships the rest", async () => {
    const { warehouse, receiver } = await start({ faults: { shortShipRate: 1 } });
    const accepted = await post(warehouse.url, "/picklists", picklist, { key });
    expect(accepted.status).toBe(202);
    await warehouse.settled();
    const [shortage] = warehouse.ledger.shortages;
    const [shipment] = warehouse.ledger.shipments;
    if (!shortage || !shipment) throw new Error("expected a shortage and a shipment");
    expect(warehouse.ledger.shortages).toHaveLength(1);
    expect(shortage.lines).toHaveLength(1);
    const missing = shortage.lines[0] as { sku: string; quantity: number };
    // One whole line of the two is missing; the other ships.
    expect(picklist.lines).toContainEqual(missing);
    expect(shipment.lines).toEqual(picklist.lines.filter((l) => l.sku !== missing.sku));
    expect(receiver.received).toEqual([
      {
        eventId: shortage.eventId,
        type: "LinesUnavailable",
        orderId: "42",
        adjustmentId: shortage.adjustmentId,
        lines: [missing],
        occurredAt: shortage.at,
      },
      expect.objectContaining({ type: "OrderShipped", shipmentId: shipment.shipmentId }),
    ]);
    // A replay of the picklist neither reports nor ships again.
    expect(await post(warehouse.url, "/picklists", picklist, { key })).toEqual(accepted);
    await warehouse.settled();
    expect([warehouse.ledger.shortages.length, warehouse.ledger.shipments.length, receiver.received.length]).toEqual([
      1, 1, 2,
    ]);
  });

  it("never short-ships a picklist of a single item, and of one line of several items reports some, never all", async () => {
    const { warehouse } = await start({ faults: { shortShipRate: 1 } });
    await post(warehouse.url, "/picklists", { orderId: "1", lines: [{ sku: "pen", quantity: 1 }] }, { key: "k1" });
    await post(warehouse.url, "/picklists", { orderId: "2", lines: [{ sku: "pen", quantity: 5 }] }, { key: "k2" });
    await warehouse.settled();
    expect(warehouse.ledger.shortages.map((s) => s.orderId)).toEqual(["2"]);
    const missing = warehouse.ledger.shortages[0]?.lines[0]?.quantity ?? 0;
    expect(missing).toBeGreaterThanOrEqual(1);
    expect(missing).toBeLessThan(5);
    const shipped = warehouse.ledger.shipments.find((s) => s.orderId === "2");
    expect(shipped?.lines).toEqual([{ sku: "pen", quantity: 5 - missing }]);
  });

  it("a restarted warehouse reports again a shortage nobody acknowledged: the same adjustment, recorded once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oncely-warehouse-short-"));
    try {
      const ledgerPath = join(dir, "warehouse.jsonl");
      // The shop stand-in refuses the shortage's only attempt (the shipment's webhook gets through).
      const first = await start({ ledgerPath, faults: { shortShipRate: 1 }, webhook: { maxAttempts: 1 } }, [500]);
      await post(first.warehouse.url, "/picklists", picklist, { key });
      await first.warehouse.settled();
      await first.warehouse.close();
      const reported = first.warehouse.ledger.shortages;
      expect(reported).toHaveLength(1);
      const second = await start({ ledgerPath });
      await second.warehouse.settled();
      expect(second.warehouse.ledger.shortages).toEqual(reported);
      expect(second.receiver.received.map((w) => [w.type, w.eventId])).toEqual([
        ["LinesUnavailable", reported[0]?.eventId],
        ["OrderShipped", second.warehouse.ledger.shipments[0]?.eventId],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reports nothing while shortShipRate is 0, and draws nothing: the seeded faults stay as they were", async () => {
    const runs = await Promise.all(
      [{}, { shortShipRate: 0 }].map(async (faults) => {
        const { warehouse } = await start({ seed: 7, faults: { ...faults, outOfStockRate: 0.5 } });
        const answers = [];
        for (let i = 0; i < 8; i++) {
          answers.push(
            (await post(warehouse.url, "/picklists", { ...picklist, orderId: `o${i}` }, { key: `k${i}` })).status,
          );
        }
        await warehouse.settled();
        expect(warehouse.ledger.shortages).toEqual([]);
        return answers;
      }),
    );
    expect(runs[1]).toEqual(runs[0]);
  });
});

describe("warehouse provider: lost webhooks and the shipment lookup", () => {
  const lookup = (url: string, k: string) => get(url, `/shipments?idempotencyKey=${encodeURIComponent(k)}`);

  it("lostWebhookRate 1: ships, never calls the shop (recorded as lost), and answers GET /shipments as the webhooks would have", async () => {
    const { warehouse, receiver } = await start({ faults: { lostWebhookRate: 1, shortShipRate: 1 } });
    await post(warehouse.url, "/picklists", picklist, { key });
    await warehouse.settled();
    expect(receiver.received).toEqual([]);
    const [shipment] = warehouse.ledger.shipments;
    const [shortage] = warehouse.ledger.shortages;
    if (!shipment || !shortage) throw new Error("the warehouse did not ship short");
    expect(warehouse.ledger.webhooks.map((w) => [w.eventId, w.outcome])).toEqual([
      [shortage.eventId, "lost"],
      [shipment.eventId, "lost"],
    ]);
    expect(await lookup(warehouse.url, key)).toEqual({
      status: 200,
      body: {
        status: "shipped",
        orderId: "42",
        picklistId: shipment.picklistId,
        shipment: {
          eventId: shipment.eventId,
          type: "OrderShipped",
          orderId: "42",
          shipmentId: shipment.shipmentId,
          occurredAt: shipment.at,
          adjustmentIds: [shortage.adjustmentId],
        },
        adjustments: [
          {
            eventId: shortage.eventId,
            type: "LinesUnavailable",
            orderId: "42",
            adjustmentId: shortage.adjustmentId,
            lines: shortage.lines,
            occurredAt: shortage.at,
          },
        ],
      },
    });
  });

  it("lostShortageWebhookRate 1: only the shortage's webhook is lost; the shipment's arrives and names it", async () => {
    const { warehouse, receiver } = await start({ faults: { lostShortageWebhookRate: 1, shortShipRate: 1 } });
    await post(warehouse.url, "/picklists", picklist, { key });
    await warehouse.settled();
    const [shipment] = warehouse.ledger.shipments;
    const [shortage] = warehouse.ledger.shortages;
    if (!shipment || !shortage) throw new Error("the warehouse did not ship short");
    expect(warehouse.ledger.webhooks.map((w) => [w.eventId, w.outcome])).toEqual([
      [shortage.eventId, "lost"],
      [shipment.eventId, "delivered"],
    ]);
    expect(receiver.received).toEqual([
      expect.objectContaining({
        type: "OrderShipped",
        eventId: shipment.eventId,
        adjustmentIds: [shortage.adjustmentId],
      }),
    ]);
  });

  it("a restarted warehouse does not send a lost webhook either", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oncely-warehouse-lost-"));
    try {
      const ledgerPath = join(dir, "warehouse.jsonl");
      const first = await start({ ledgerPath, faults: { lostWebhookRate: 1 } });
      await post(first.warehouse.url, "/picklists", picklist, { key });
      await first.warehouse.settled();
      await first.warehouse.close();
      const second = await start({ ledgerPath });
      await second.warehouse.settled();
      expect(second.receiver.received).toEqual([]);
      expect(second.warehouse.ledger.webhooks.map((w) => w.outcome)).toEqual(["lost"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("answers accepted before the shipment, cancelled for a cancelled order, 404 for a key it never saw, 400 without one", async () => {
    // A clock that never moves: nothing ships.
    const { warehouse } = await start({ clock: new SimulatedClock() });
    const accepted = await post(warehouse.url, "/picklists", picklist, { key });
    expect(await lookup(warehouse.url, key)).toEqual({
      status: 200,
      body: { status: "accepted", orderId: "42", picklistId: accepted.body.picklistId },
    });
    await post(warehouse.url, "/picklist-cancellations", { orderId: "42" }, { key: "order:42:picklist-cancel" });
    expect((await lookup(warehouse.url, key)).body).toMatchObject({ status: "cancelled" });
    expect((await lookup(warehouse.url, "order:43:picklist")).status).toBe(404);
    expect((await get(warehouse.url, "/shipments")).status).toBe(400);
  });
});
